// What every module receives: configuration and the shared platform services.
import type { FastifyBaseLogger } from 'fastify';
import type { Config } from './config.ts';
import type { AuditLog } from './platform/audit/log.ts';
import type { BlobStore } from './platform/blobs/store.ts';
import type { SecretBox } from './platform/crypto/secrets.ts';
import type { SigningKeys } from './platform/crypto/signing-keys.ts';
import type { Database, Db } from './platform/db/engine.ts';
import type { Events } from './platform/events/emit.ts';
import type { Auth } from './platform/http/auth.ts';
import type { Authority } from './platform/http/authority.ts';
import type { CallAdmission } from './platform/limits/admission.ts';
import type { Mailer } from './platform/mail/mailer.ts';

export interface AppContext {
  config: Config;
  database: Database;
  db: Db;
  secrets: SecretBox;
  keys: SigningKeys;
  blobs: BlobStore;
  auth: Auth;
  /** The event catalogue, and emitting an event with its consumers' fan-out. */
  events: Events;
  /** Who may do what to one resource: the resource types of every module, and the one place that decides. */
  authority: Authority;
  /** Whether a paid call (the LLM proxy's) may go ahead: billing's answer, or always yes without it. */
  admission: CallAdmission;
  /** The audit log: entries written with the change they record, and those of refusals and sign-ins soon after. */
  audit: AuditLog;
  /** Outgoing mail (SMTP, or the development outbox). */
  mail: Mailer;
  log: FastifyBaseLogger;
}
