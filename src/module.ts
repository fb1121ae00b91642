// The shape every module of the service has. A module is one folder whose index.ts exports one
// descriptor; src/modules/index.ts lists the descriptors once, and boot (src/main.ts) and assembly
// (src/app.ts) loop over that list. Nothing is registered as a side effect of importing a module.
import type { FastifyBaseLogger, FastifyInstance, RawReplyDefaultExpression, RawRequestDefaultExpression, RawServerDefault } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { AppContext } from './context.ts';
import type { SealedColumns } from './platform/crypto/sealed.ts';
import type { EventConsumer, EventDefinition } from './platform/events/catalogue.ts';
import type { CredentialVerifier, Memberships } from './platform/http/auth.ts';
import type { BrowserOrigins } from './platform/http/cors.ts';
import type { PolicyBindings, ResourceType, TokenRole } from './platform/http/authority.ts';
import type { Schedule, Timetable } from './platform/jobs/scheduler.ts';
import type { JobDeclaration } from './platform/jobs/types.ts';
import type { CallAdmission } from './platform/limits/admission.ts';

/** The Fastify instance a module's routes are declared on (TypeBox types the handlers). */
export type Api = FastifyInstance<RawServerDefault, RawRequestDefaultExpression, RawReplyDefaultExpression, FastifyBaseLogger, TypeBoxTypeProvider>;

export interface Module {
  /** Folder name; shown in logs, the route table and the isolation walk. */
  readonly name: string;
  /** Declares the module's HTTP surface. Every route states its credentials, permission and schemas. */
  readonly routes?: (app: Api, ctx: AppContext) => void | Promise<void>;
  /** Credential kinds the module verifies (API keys, personal access tokens, OAuth access tokens). */
  readonly verifiers?: (ctx: AppContext) => readonly CredentialVerifier[];
  /** Project membership lookups for the auth hook; exactly one module provides them. */
  readonly memberships?: (ctx: AppContext) => Memberships;
  /** Admission of paid calls (the billing module, at most one); every call is admitted without it. */
  readonly admission?: (ctx: AppContext) => CallAdmission;
  /** Which browser origins OAuth clients allow (CORS); the OAuth clients module, exactly one. */
  readonly browserOrigins?: (ctx: AppContext) => BrowserOrigins;
  /** The module's jobs: each job type (topic, payload schema) with its handler; a topic belongs to one module. */
  readonly jobs?: readonly JobDeclaration<AppContext>[];
  /** Periodic work, run by one instance per due time. */
  readonly schedules?: (ctx: AppContext) => readonly Schedule[];
  /** Rows of the module's own that fall due on a clock (per-room scheduled tasks), fired by the scheduler. */
  readonly timetables?: (ctx: AppContext) => readonly Timetable[];
  /** Domain events this module emits (the catalogue is the union over all modules). */
  readonly events?: readonly EventDefinition[];
  /** Consumers of events (the events each takes, the job it queues, its fan-out) that run in the emitting statement. */
  readonly eventConsumers?: (ctx: AppContext) => readonly EventConsumer[];
  /**
   * The module's resource types and who may do what to one resource (src/platform/http/authority.ts):
   * the actions and the project roles that allow each everywhere, the roles of the resource's policy
   * (`/policies/resources/{type}/{id}`), what a resource's own settings open, the participant-token
   * grants that name it, and what a token for it may carry. Routes name an action of these
   * (`auth.resource`); the platform decides every one from these tables.
   */
  readonly resources?: readonly ResourceType[];
  /** Project roles that a surface of a participant-token grant stands for (`api.llm`: `llm_proxy_user`), which its signer must hold. */
  readonly tokenRoles?: readonly TokenRole[];
  /** The bindings of resource policies, for the decisions of the platform; exactly one module (policies) keeps them. */
  readonly policyBindings?: (ctx: AppContext) => PolicyBindings;
  /** The module's columns holding values encrypted under ATRIUM_SECRET_KEY (`ctx.secrets`), which `atrium keys reencrypt` moves to a new key. */
  readonly sealed?: readonly SealedColumns[];
}
