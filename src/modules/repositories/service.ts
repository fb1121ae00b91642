// Rules for image repositories: names as the OCI distribution spec defines them, unique in the
// project; and registry tokens scoped to one repository and to no more actions than the caller may take
// on it (`repository.pull`, `repository.push`, decided by the platform).
import { randomUUID } from 'node:crypto';
import type { AppContext } from '../../context.ts';
import { isUuid } from '../../platform/crypto/credentials.ts';
import type { Db } from '../../platform/db/engine.ts';
import type { Actor } from '../../platform/http/authority.ts';
import { badRequest, conflict, forbidden, notFound } from '../../platform/http/errors.ts';
import type { Page } from '../../platform/http/lists.ts';
import { forgetResource } from '../policies/service.ts';
import { REPOSITORY_ACTIONS, type RepositoryAction } from './schema.ts';
import * as store from './store.ts';

// The distribution spec's `<name>`: path components of lower-case letters and digits, separated
// inside by one `.`, one or two `_`, or any number of `-`.
const COMPONENT = '[a-z0-9]+(?:(?:\\.|_|__|-+)[a-z0-9]+)*';
const OCI_NAME = new RegExp(`^${COMPONENT}(?:/${COMPONENT})*$`);

/** The resource type of repositories: who may do what with one is declared with it, in the module's descriptor. */
export const REPOSITORY_RESOURCE = 'repository';

/** The repository's name in the registry: the project id keeps projects apart on a shared registry. */
const registryName = (row: store.RepositoryRow) => `${row.projectId}/${row.name}`;

export function repositoryView(row: store.RepositoryRow) {
  return {
    id: row.id,
    project_id: row.projectId,
    name: row.name,
    registry_name: registryName(row),
    description: row.description,
    annotations: row.annotations,
    created_at: row.createdAt.toISOString(),
    updated_at: row.updatedAt.toISOString(),
  };
}

export interface RepositoryInput {
  name: string;
  description?: string | null | undefined;
  annotations?: Record<string, string> | null | undefined;
}

function checkName(name: string): void {
  if (!OCI_NAME.test(name)) {
    throw badRequest('name must be an OCI repository name: lower-case letters and digits, separated inside a component by ".", "_", "__" or dashes, components joined by "/" (e.g. "team/web-app")');
  }
}

export async function createRepository(ctx: AppContext, projectId: string, input: RepositoryInput): Promise<store.RepositoryRow> {
  checkName(input.name);
  const row = await store.insertRepository(ctx.db, {
    id: randomUUID(), projectId, name: input.name, description: input.description ?? '', annotations: input.annotations ?? {},
  });
  if (!row) throw conflict(`A repository named ${JSON.stringify(input.name)} already exists`, 'already_exists');
  return row;
}

/** The repositories the caller sees (`repository.see`): all of them by a project role, else those its policy roles reach. */
export async function listRepositories(ctx: AppContext, actor: Actor, page: Page) {
  const shown = await ctx.authority.visible(actor, ctx.authority.type(REPOSITORY_RESOURCE)!);
  const { items, total } = await store.listRepositories(ctx.db, actor.access.projectId, page, shown);
  return { repositories: items.map(repositoryView), total };
}

export async function updateRepository(ctx: AppContext, projectId: string, id: string, input: RepositoryInput): Promise<store.RepositoryRow> {
  checkName(input.name);
  const clash = await store.findRepositoryByName(ctx.db, projectId, input.name);
  if (clash && clash.id !== id) throw conflict(`A repository named ${JSON.stringify(input.name)} already exists`, 'already_exists');
  const row = await store.updateRepository(ctx.db, projectId, id, { name: input.name, description: input.description ?? '', annotations: input.annotations ?? {} });
  if (!row) throw notFound('Repository');
  return row;
}

/** A repository by id, for resource policies (any text may arrive as an id there). */
export async function findRepositoryById(db: Db, projectId: string, id: string): Promise<store.RepositoryRow | undefined> {
  return isUuid(id) ? store.findRepository(db, projectId, id) : undefined;
}

export async function deleteRepository(ctx: AppContext, projectId: string, id: string): Promise<void> {
  await ctx.db.transaction(async (tx) => {
    if (!(await store.deleteRepository(tx, projectId, id))) throw notFound('Repository');
    await forgetResource(tx, projectId, REPOSITORY_RESOURCE, id);
  });
}

/**
 * A registry bearer token in the shape of the Docker registry token-authentication spec: issued by
 * this service, for the configured registry service, granting `actions` on this one repository.
 */
export async function issueRepositoryToken(ctx: AppContext, actor: Actor, repository: store.RepositoryRow, input: { actions?: RepositoryAction[] | undefined; expires_in_seconds?: number | undefined }) {
  const type = ctx.authority.type(REPOSITORY_RESOURCE)!;
  const actions = REPOSITORY_ACTIONS.filter((a) => (input.actions ?? ['pull']).includes(a));
  const decisions = await Promise.all(actions.map((action) => ctx.authority.decide(actor, type, repository, action)));
  const refused = actions.filter((_action, i) => !decisions[i]!.allowed);
  if (refused.length > 0) throw forbidden(`You may not grant ${refused.join(', ')} on this repository`);
  const issuedAt = Math.floor(Date.now() / 1000);
  const expiresAt = issuedAt + (input.expires_in_seconds ?? 3600);
  const token = ctx.keys.signJwt({
    access: [{ type: 'repository', name: registryName(repository), actions }],
    iss: ctx.config.publicUrl, sub: actor.principal.name, aud: ctx.config.repositories.registryService,
    iat: issuedAt, nbf: issuedAt, exp: expiresAt, jti: randomUUID(),
  });
  return { token, expires_at: new Date(expiresAt * 1000).toISOString() };
}
