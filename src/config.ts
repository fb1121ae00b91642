// Every setting of the service, read from the environment once at boot and validated against one
// schema, so a typo fails fast with the name of the bad variable instead of misbehaving later.
import { resolve } from 'node:path';
import { Type, type Static } from 'typebox';
import { Value } from 'typebox/value';

const Bool = Type.Union([Type.Literal('true'), Type.Literal('false'), Type.Literal('1'), Type.Literal('0')]);

// Environment variable → description. The schema below validates the raw strings.
const EnvSchema = Type.Object({
  PORT: Type.Optional(Type.String({ pattern: '^[0-9]{1,5}$', description: 'TCP port to listen on (default 8000)' })),
  HOST: Type.Optional(Type.String({ minLength: 1, description: 'Interface to bind (default 0.0.0.0)' })),
  ATRIUM_PUBLIC_URL: Type.Optional(Type.String({ pattern: '^https?://[^\\s/]+(/[^\\s]*)?$', description: 'Public base URL; the OAuth issuer' })),
  ATRIUM_DATA_DIR: Type.Optional(Type.String({ minLength: 1, description: 'Data directory (embedded database, blobs, keys)' })),
  ATRIUM_ROOMS_URL: Type.Optional(Type.String({ pattern: '^wss?://[^\\s]+$', description: 'Base WebSocket URL of rooms (default: the public URL with ws(s) and /rooms)' })),
  DATABASE_URL: Type.Optional(Type.String({ pattern: '^postgres(ql)?://', description: 'PostgreSQL URL; embedded PGlite when unset' })),
  DATABASE_POOL_SIZE: Type.Optional(Type.String({ pattern: '^[0-9]{1,3}$', description: 'PostgreSQL connections per instance (default 20)' })),
  ATRIUM_SECRET_KEY: Type.Optional(Type.String({ pattern: '^[A-Za-z0-9+/_=-]{43,44}$', description: 'base64 32-byte key encrypting stored secrets; generated in the data dir when unset' })),
  ATRIUM_MAX_UPLOAD_BYTES: Type.Optional(Type.String({ pattern: '^[0-9]{1,12}$', description: 'Largest project storage upload (default 100 MiB)' })),
  ATRIUM_AUTH_CACHE_SECONDS: Type.Optional(Type.String({ pattern: '^[0-9]{1,4}$', description: 'How long a verified credential is cached (default 5)' })),
  ATRIUM_LOG_LEVEL: Type.Optional(Type.Enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'], { description: 'Log level (default info)' })),
  ATRIUM_TRUST_PROXY: Type.Optional(Bool),
});

export interface Config {
  port: number;
  host: string;
  publicUrl: string;
  roomsUrl: string;
  dataDir: string;
  databaseUrl: string | undefined;
  databasePoolSize: number;
  secretKey: string | undefined;
  maxUploadBytes: number;
  authCacheMs: number;
  logLevel: string;
  trustProxy: boolean;
}

export class ConfigError extends Error {}

export function loadConfig(env: Record<string, string | undefined> = process.env): Config {
  const raw: Record<string, string> = {};
  for (const key of Object.keys(EnvSchema.properties)) {
    const value = env[key];
    if (value !== undefined && value !== '') raw[key] = value;
  }
  const errors = [...Value.Errors(EnvSchema, raw)];
  if (errors.length > 0) {
    const names = errors.map((e) => {
      const name = e.instancePath.replace(/^\//, '');
      const description = (EnvSchema.properties as Record<string, { description?: string }>)[name]?.description;
      return `${name}=${JSON.stringify(raw[name])} is invalid${description ? ` (${description})` : ''}`;
    });
    throw new ConfigError(`Invalid configuration: ${[...new Set(names)].join('; ')}`);
  }
  const settings = raw as Static<typeof EnvSchema>;
  const port = Number(settings.PORT ?? 8000);
  if (port > 65535) throw new ConfigError(`Invalid configuration: PORT=${port} is out of range`);
  const publicUrl = (settings.ATRIUM_PUBLIC_URL ?? `http://localhost:${port}`).replace(/\/+$/, '');
  return {
    port,
    host: settings.HOST ?? '0.0.0.0',
    publicUrl,
    roomsUrl: (settings.ATRIUM_ROOMS_URL ?? `${publicUrl.replace(/^http/, 'ws')}/rooms`).replace(/\/+$/, ''),
    dataDir: resolve(settings.ATRIUM_DATA_DIR ?? './data'),
    databaseUrl: settings.DATABASE_URL,
    databasePoolSize: Number(settings.DATABASE_POOL_SIZE ?? 20),
    secretKey: settings.ATRIUM_SECRET_KEY,
    maxUploadBytes: Number(settings.ATRIUM_MAX_UPLOAD_BYTES ?? 100 * 1024 * 1024),
    authCacheMs: Number(settings.ATRIUM_AUTH_CACHE_SECONDS ?? 5) * 1000,
    logLevel: settings.ATRIUM_LOG_LEVEL ?? 'info',
    trustProxy: settings.ATRIUM_TRUST_PROXY === 'true' || settings.ATRIUM_TRUST_PROXY === '1',
  };
}
