// Rules for services: a ServiceSpec or a rendered template, names unique among the project's services
// and among each room's, values of obscure template variables never shown (only room servers get
// them, through `servicesToRun`).
import { randomUUID } from 'node:crypto';
import type { AppContext } from '../../context.ts';
import type { Actor } from '../../platform/http/authority.ts';
import { badRequest, conflict, forbidden, notFound, tooLarge } from '../../platform/http/errors.ts';
import type { Page } from '../../platform/http/lists.ts';
import { getRoom, getRoomToActIn } from '../rooms/service.ts';
import { storageSubpathProblem } from '../storage/service.ts';
import type { ServiceSpecInput, TemplateInput } from './schema.ts';
import * as store from './store.ts';
import { MAX_SPEC_CHARACTERS, renderTemplate } from './templates.ts';

export type ServiceInput = ServiceSpecInput | TemplateInput;

/** The service as the SDKs parse it: its spec, with its id. */
export function serviceView(row: Pick<store.ServiceRow, 'id' | 'spec'>) {
  return { ...row.spec, id: row.id } as { version: 'v1'; kind: 'Service'; id: string } & Record<string, unknown>;
}

/**
 * The `subpath` of a room or project storage mount is a folder of that storage the room server
 * mounts: it must stay inside it. The message names the mount, never the value (it may hold an
 * obscure template value).
 */
function checkMounts(spec: ServiceSpecInput): void {
  const storage = spec.container?.storage;
  for (const kind of ['room', 'project'] as const) {
    (storage?.[kind] ?? []).forEach((mount, i) => {
      const subpath = mount.subpath;
      if (subpath === undefined || subpath === null) return;
      const problem = typeof subpath === 'string' ? storageSubpathProblem(subpath) : 'must be a string';
      if (problem) throw badRequest(`container.storage.${kind}[${i}].subpath: ${problem}`, 'invalid_path');
    });
  }
}

/** Ids of the project secrets a service spec refers to: `secrets`, `pull_secret`, and environment values from secrets. */
export function secretsOf(spec: Record<string, unknown>): string[] {
  const container = spec.container as { secrets?: string[] | null; pull_secret?: string | { id: string } | null; environment?: { secret?: { id: string } | null }[] | null } | null | undefined;
  if (!container) return [];
  const ids = new Set(container.secrets ?? []);
  const pull = container.pull_secret;
  if (pull) ids.add(typeof pull === 'string' ? pull : pull.id);
  for (const variable of container.environment ?? []) if (variable.secret) ids.add(variable.secret.id);
  return [...ids];
}

/**
 * A service's container is given the values of the secrets its spec names, so only a caller who may
 * read secret values (`secret_inventory`) writes a spec that names any: nobody reads a secret
 * through a service they run.
 */
function checkSecrets(actor: Actor, spec: Record<string, unknown>): void {
  const named = secretsOf(spec);
  if (named.length > 0 && !actor.access.roles.has('secret_inventory')) {
    throw forbidden(`The spec names ${named.length === 1 ? 'a secret' : `${named.length} secrets`}, whose values its container is given: that needs the secret_inventory project role`);
  }
}

/** What to store for an input: the spec to show, the name, and the spec to run when it differs. */
function prepare(ctx: AppContext, actor: Actor, input: ServiceInput): Pick<store.ServiceRow, 'name' | 'spec' | 'specSealed'> {
  if ('template' in input) {
    const rendered = renderTemplate(input.template, input.values ?? {});
    checkMounts(rendered.spec);
    checkSecrets(actor, rendered.spec);
    return { name: rendered.spec.metadata.name, spec: rendered.shown, specSealed: rendered.obscured ? ctx.secrets.encrypt(JSON.stringify(rendered.spec)) : null };
  }
  const { id: _ignored, ...spec } = input;
  if (JSON.stringify(spec).length > MAX_SPEC_CHARACTERS) throw tooLarge(`A service spec holds at most ${MAX_SPEC_CHARACTERS} characters as JSON`);
  checkMounts(spec);
  checkSecrets(actor, spec);
  return { name: spec.metadata.name, spec, specSealed: null };
}

const nameTaken = (name: string, roomName: string | undefined) =>
  conflict(`A service named ${JSON.stringify(name)} already exists ${roomName === undefined ? 'in the project' : `in room ${JSON.stringify(roomName)}`}`, 'already_exists');

async function scopeOf(ctx: AppContext, projectId: string, roomName: string | undefined): Promise<store.Scope> {
  return { projectId, roomId: roomName === undefined ? null : (await getRoom(ctx, projectId, roomName)).id };
}

/** The scope a service is written to: a room's only for a caller who may connect to it (the service acts in it). */
async function scopeToWrite(ctx: AppContext, actor: Actor, projectId: string, roomName: string | undefined): Promise<store.Scope> {
  return { projectId, roomId: roomName === undefined ? null : (await getRoomToActIn(ctx, actor, roomName)).id };
}

/** Creates a project service, or a room's when `roomName` is given. */
export async function createService(ctx: AppContext, actor: Actor, projectId: string, roomName: string | undefined, input: ServiceInput) {
  const scope = await scopeToWrite(ctx, actor, projectId, roomName);
  const prepared = prepare(ctx, actor, input);
  const row = await store.insertService(ctx.db, { id: randomUUID(), ...scope, ...prepared });
  if (!row) throw nameTaken(prepared.name, roomName);
  return serviceView(row);
}

export async function getService(ctx: AppContext, projectId: string, roomName: string | undefined, serviceId: string) {
  const row = await store.findService(ctx.db, await scopeOf(ctx, projectId, roomName), serviceId);
  if (!row) throw notFound('Service');
  return serviceView(row);
}

export async function listServices(ctx: AppContext, projectId: string, roomName: string | undefined, page: Page) {
  const { items, total } = await store.listServices(ctx.db, await scopeOf(ctx, projectId, roomName), page);
  return { services: items.map(serviceView), total };
}

export async function updateService(ctx: AppContext, actor: Actor, projectId: string, roomName: string | undefined, serviceId: string, input: ServiceInput) {
  const scope = await scopeToWrite(ctx, actor, projectId, roomName);
  const prepared = prepare(ctx, actor, input);
  const clash = await store.findServiceByName(ctx.db, scope, prepared.name);
  if (clash && clash.id !== serviceId) throw nameTaken(prepared.name, roomName);
  const row = await store.updateService(ctx.db, scope, serviceId, prepared);
  if (!row) throw notFound('Service');
  return serviceView(row);
}

export async function deleteService(ctx: AppContext, projectId: string, roomName: string | undefined, serviceId: string): Promise<void> {
  if (!(await store.deleteService(ctx.db, await scopeOf(ctx, projectId, roomName), serviceId))) throw notFound('Service');
}

export interface ServiceToRun {
  id: string;
  scope: 'project' | 'room';
  spec: Record<string, unknown>;
}

/**
 * The services a room runs: the project's and the room's own, templates rendered with every value
 * (obscure ones too), a room service shadowing a project service of the same name. For room servers.
 */
export async function servicesToRun(ctx: AppContext, projectId: string, roomId: string): Promise<ServiceToRun[]> {
  const byName = new Map<string, ServiceToRun>();
  for (const row of await store.servicesForRoom(ctx.db, projectId, roomId)) {
    const spec = row.specSealed === null ? row.spec : JSON.parse(ctx.secrets.decrypt(row.specSealed)) as Record<string, unknown>;
    byName.set(row.name, { id: row.id, scope: row.roomId === null ? 'project' : 'room', spec: { ...spec, id: row.id } });
  }
  return [...byName.values()];
}
