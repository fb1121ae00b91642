// String formats of the bearer credentials Atrium issues.
//
// API keys use the envelope the official SDK (@meshagent/meshagent 0.39.9) parses:
//   ma-<b64(key uuid)>-<b64(project uuid)>-<secret>
// where b64 is URL-safe base64 of the 16 UUID bytes, unpadded, with '-' replaced by '.', so the
// first two '-' after the prefix always split the fields. The secret may itself contain '-'.
// Personal access tokens: atp_<b64(token uuid)>_<secret>.
import { randomSecret } from './secrets.ts';

const UUID_RE = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

export function isUuid(value: string): boolean {
  return UUID_RE.test(value);
}

function uuidToB64(uuid: string): string {
  return Buffer.from(uuid.replaceAll('-', ''), 'hex').toString('base64url').replaceAll('-', '.');
}

function b64ToUuid(value: string): string | undefined {
  if (!/^[A-Za-z0-9._]{22}$/.test(value)) return undefined;
  const hex = Buffer.from(value.replaceAll('.', '-'), 'base64url').toString('hex');
  if (hex.length !== 32) return undefined;
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}

export interface ApiKeyParts {
  keyId: string;
  projectId: string;
  secret: string;
}

export function newApiKey(keyId: string, projectId: string): ApiKeyParts & { value: string } {
  const secret = randomSecret(32);
  return { keyId, projectId, secret, value: formatApiKey({ keyId, projectId, secret }) };
}

export function formatApiKey(parts: ApiKeyParts): string {
  return `ma-${uuidToB64(parts.keyId)}-${uuidToB64(parts.projectId)}-${parts.secret}`;
}

export function parseApiKey(value: string): ApiKeyParts | undefined {
  if (!value.startsWith('ma-')) return undefined;
  const rest = value.slice(3);
  const first = rest.indexOf('-');
  const second = rest.indexOf('-', first + 1);
  if (first < 0 || second < 0) return undefined;
  const keyId = b64ToUuid(rest.slice(0, first));
  const projectId = b64ToUuid(rest.slice(first + 1, second));
  const secret = rest.slice(second + 1);
  if (!keyId || !projectId || secret.length < 16) return undefined;
  return { keyId, projectId, secret };
}

export function newPersonalAccessToken(tokenId: string): { tokenId: string; secret: string; value: string } {
  const secret = randomSecret(32);
  return { tokenId, secret, value: `atp_${uuidToB64(tokenId)}_${secret}` };
}

export function parsePersonalAccessToken(value: string): { tokenId: string; secret: string } | undefined {
  const match = /^atp_([A-Za-z0-9._]{22})_([A-Za-z0-9_-]{16,})$/.exec(value);
  const tokenId = match && b64ToUuid(match[1]!);
  return tokenId ? { tokenId, secret: match[2]! } : undefined;
}
