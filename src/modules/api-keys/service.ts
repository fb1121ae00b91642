// Rules for API keys: the value is shown once; revocation takes effect at once on this instance and
// within the auth cache lifetime everywhere else.
import { randomUUID } from 'node:crypto';
import type { AppContext } from '../../context.ts';
import { newApiKey, parseApiKey } from '../../platform/crypto/credentials.ts';
import { hashSecret, secretMatches } from '../../platform/crypto/secrets.ts';
import type { CredentialVerifier, Principal } from '../../platform/http/auth.ts';
import { notFound } from '../../platform/http/errors.ts';
import { isRole, type Role } from '../../platform/http/roles.ts';
import type { Db } from '../../platform/db/engine.ts';
import type { SecretBox } from '../../platform/crypto/secrets.ts';
import * as store from './store.ts';

export function apiKeyView(key: store.ApiKeyRow) {
  return {
    id: key.id,
    name: key.name,
    description: key.description,
    roles: key.roles ? key.roles.filter(isRole) : null,
    created_by: key.createdBy,
    created_at: key.createdAt.toISOString(),
  };
}

export async function createApiKey(db: Db, box: SecretBox, projectId: string, input: { name: string; description?: string | null | undefined; roles?: Role[] | null | undefined; createdBy?: string | undefined }) {
  const key = newApiKey(randomUUID(), projectId);
  const row = await store.insertApiKey(db, {
    id: key.keyId,
    projectId,
    name: input.name,
    description: input.description ?? '',
    roles: input.roles ?? null,
    secretHash: hashSecret(key.secret),
    secretEncrypted: box.encrypt(key.secret),
    createdBy: input.createdBy ?? null,
  });
  return { ...apiKeyView(row), value: key.value };
}

export async function listApiKeys(ctx: AppContext, projectId: string, filter?: string) {
  return (await store.listApiKeys(ctx.db, projectId, filter || undefined)).map(apiKeyView);
}

export async function revokeApiKey(ctx: AppContext, projectId: string, keyId: string): Promise<void> {
  if (!(await store.deleteApiKey(ctx.db, projectId, keyId))) throw notFound('API key');
  ctx.auth.forgetCredential(keyId);
}

/** Whether a live API key with this id belongs to the project (the service accounts of resource policies). */
export async function isProjectApiKey(db: Db, projectId: string, keyId: string): Promise<boolean> {
  return (await store.findApiKey(db, keyId))?.projectId === projectId;
}

/** A live key as the credential it is: it acts in its project with its roles (as an admin without them). */
function apiKeyPrincipal(row: store.ApiKeyRow): Principal {
  return {
    kind: 'api_key',
    credentialId: row.id,
    projectId: row.projectId,
    keyRoles: row.roles ? row.roles.filter(isRole) : undefined,
    name: `api-key:${row.name}`,
  };
}

/** The secret of a live key, for verifying participant tokens the key signed, and the key as their signer. */
export async function findApiKeySecret(ctx: AppContext, keyId: string): Promise<{ principal: Principal; secret: string } | undefined> {
  const row = await store.findApiKey(ctx.db, keyId);
  return row ? { principal: apiKeyPrincipal(row), secret: ctx.secrets.decrypt(row.secretEncrypted) } : undefined;
}

export function apiKeyVerifier(db: Db): CredentialVerifier {
  return {
    kind: 'api_key',
    matches: (token) => token.startsWith('ma-'),
    async verify(token) {
      const parsed = parseApiKey(token);
      if (!parsed) return undefined;
      const row = await store.findApiKey(db, parsed.keyId);
      if (!row || row.projectId !== parsed.projectId || !secretMatches(parsed.secret, row.secretHash)) return undefined;
      return apiKeyPrincipal(row);
    },
  };
}
