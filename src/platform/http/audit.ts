// The audit log's step on every state-changing route of a project: the handler runs in one
// transaction (src/platform/db/scope.ts), and when it succeeds the entry — who, with which
// credential, which action on which target, from where — is written in that transaction before the
// answer is sent. A refusal by the authority check (a missing project role, a resource the caller
// may not act on) changes nothing and is written soon after its answer, grouped with others.
//
// The action is the route's declared resource action (`room.update`); a route that declares none
// is named by its path and method, by one rule (`auditAction`), so a new route is recorded without
// a line of its own.
import { Readable } from 'node:stream';
import type { FastifyInstance, FastifyReply, FastifyRequest, RouteOptions } from 'fastify';
import type { AuditActor, AuditEntry, AuditLog, AuditOrigin, AuditOutcome } from '../audit/log.ts';
import type { Db } from '../db/engine.ts';
import { inRequestTransaction } from '../db/scope.ts';
import type { AuthRequirement, Principal } from './auth.ts';
import { isRole } from './roles.ts';
import { actionName, decisionOf } from './authority.ts';

const CHANGING = new Set(['POST', 'PUT', 'PATCH', 'DELETE']);

declare module 'fastify' {
  interface FastifyContextConfig {
    /**
     * `false` for a POST that changes nothing and is served at a hot path's rate: a room's connect,
     * which answers a participant token from what the caller already holds. `'statement'` for a
     * route whose change is one statement made through `AuditLog.change`, which writes the entry
     * itself: no transaction is opened around it (a room's create, the hottest write). An
     * `AccountAudit` for a route outside any project that changes the caller's own account.
     */
    audit?: false | 'statement' | AccountAudit;
  }
}

/**
 * What a route outside any project that changes the caller's own account records: a deployment
 * event (no project) on the caller's account, written with the change. Routes that change nothing
 * that counts (an enrolment not yet confirmed) declare none.
 */
export interface AccountAudit {
  /** `<type>.<what happened>`: `second_factor.totp_enrolled`. */
  readonly action: string;
  /** What happened, in words (docs/audit-log.md lists it). */
  readonly means: string;
}

/** What an audited route records: its action, and where the request names the target. */
export interface AuditedRoute {
  readonly action: string;
  readonly targetType: string;
  /** The path parameter naming the target; without one, the created resource's `id` in the answer. */
  readonly targetParam?: string | undefined;
  /** For a create whose answer has no `id`: the resource the path names last, which it was created in. */
  readonly owner?: { readonly targetType: string; readonly targetParam: string } | undefined;
  /** The handler's change is one statement that writes the entry (`audit: 'statement'`). */
  readonly inStatement?: boolean | undefined;
  /** A deployment event on the caller's own account (a route outside any project), not a project's. */
  readonly account?: true | undefined;
}

const word = (segment: string) => segment.replace(/-/g, '_');
const singular = (collection: string) => word(collection).replace(/ies$/, 'y').replace(/(x|ch|sh|ss)es$/, '$1').replace(/(?<!s)s$/, '');
/** A collection's segment is a plural noun (`rooms`, `api-keys`); any other static segment is a verb or a singleton (`rotate-secret`, `storage`). */
const isCollection = (segment: string) => /[^s]s$/.test(segment);
const isParam = (segment: string | undefined): segment is string => segment?.startsWith(':') === true;
const verbOf = (method: string) => ({ POST: 'create', PUT: 'update', PATCH: 'update', DELETE: 'delete' })[method] ?? method.toLowerCase();

/**
 * A route is audited when it changes state (POST, PUT, PATCH, DELETE) in a project named by its
 * path with a project role: the administration API (unless it declares `audit: false`). Its action
 * is its declared resource action, else `<type>.<verb>` from the path after the project:
 * - one resource (`…/api-keys/:id`): its collection's type, and `update` (PUT, PATCH) or `delete`;
 * - a collection (`…/rooms`, `…/rooms/:room_name/secrets`, and any segment right after the
 *   project: `…/recharge`): POST is `room.create`, `secret.create`, `recharge.create` on the created
 *   resource (the answer's `id`, else the resource the path names last); PUT and DELETE update or
 *   delete it as a whole (`…/settings` is `setting.update`, `…/sign-in-policy` `sign_in_policy.update`)
 *   on the resource the path names last (the project, here);
 * - a verb after a resource (`…/webhooks/:webhook_id/rotate-secret`, `…/storage/upload`): POST is
 *   the verb on that resource (`webhook.rotate_secret`, `storage.upload`).
 */
export function auditAction(route: Pick<RouteOptions, 'url' | 'config'> & { method: string }): AuditedRoute | undefined {
  const { auth, audit } = (route.config ?? {}) as { auth?: AuthRequirement; audit?: false | 'statement' | AccountAudit };
  if (audit === false || !CHANGING.has(route.method) || !auth || !isRole(auth.permission) || (auth.project ?? 'path') !== 'path') return undefined;
  const named = routeAction(route.url, route.method, auth);
  return named && audit === 'statement' ? { ...named, inStatement: true } : named;
}

function routeAction(url: string, method: string, auth: AuthRequirement): AuditedRoute | undefined {
  const path = url.split('/').filter(Boolean);
  const at = path.indexOf(':project_id');
  if (at < 0) return undefined;
  const requirement = auth.resource;
  if (requirement) {
    const action = actionName(requirement);
    return { action, targetType: action.slice(0, action.lastIndexOf('.')), targetParam: requirement.param };
  }
  const rest = path.slice(at + 1);
  const verb = verbOf(method);
  const last = rest.at(-1);
  const before = rest.at(-2);
  /** The resource the path names last: its type and parameter (the project when none other). */
  const named = () => {
    const index = rest.findLastIndex(isParam);
    return index < 0 ? { targetType: 'project', targetParam: 'project_id' } : { targetType: singular(rest[index - 1] ?? 'project'), targetParam: rest[index]!.slice(1) };
  };
  if (last === undefined) return { action: `project.${verb}`, targetType: 'project', targetParam: 'project_id' };
  if (isParam(last)) return { action: `${singular(before ?? 'project')}.${verb}`, targetType: singular(before ?? 'project'), targetParam: last.slice(1) };
  if (method !== 'POST') return { action: `${(isCollection(last) ? singular : word)(last)}.${verb}`, ...named() };
  if (before !== undefined && !isParam(before)) return { action: `${word(before)}.${word(last)}`, targetType: word(before), owner: named() };
  if (isCollection(last) || before === undefined) return { action: `${singular(last)}.create`, targetType: singular(last), owner: named() };
  const owner = named();
  return { action: `${owner.targetType}.${word(last)}`, ...owner };
}

/**
 * A state-changing route outside any project that declares its `audit` action, for the signed-in
 * user's own account: its entry has no project and names the caller's account as its target.
 */
export function accountAction(route: Pick<RouteOptions, 'url' | 'config'> & { method: string }): AuditedRoute | undefined {
  const { auth, audit } = (route.config ?? {}) as { auth?: AuthRequirement; audit?: false | 'statement' | AccountAudit };
  if (typeof audit !== 'object' || !CHANGING.has(route.method) || !auth || route.url.includes(':project_id')) return undefined;
  return { action: audit.action, targetType: 'account', account: true };
}

/** Who a credential stands for in an entry. */
export function auditActor(principal: Principal): AuditActor {
  const credential = { credentialKind: principal.kind, credentialId: principal.credentialId, name: principal.name };
  switch (principal.kind) {
    case 'api_key': return { type: 'api_key', id: principal.credentialId, ...credential };
    case 'participant': return { type: 'participant', id: principal.signer?.credentialId ?? principal.credentialId, ...credential };
    case 'oauth': return { type: 'user', id: principal.userId, oauthClientId: principal.clientId, ...credential };
    default: return { type: 'user', id: principal.userId, ...credential };
  }
}

/** Where a request came from: Fastify's `request.ip` follows ATRIUM_TRUST_PROXY. */
export function auditOrigin(request: FastifyRequest): AuditOrigin {
  const agent = request.headers['user-agent'];
  return { requestId: request.id, clientAddress: request.ip, userAgent: typeof agent === 'string' ? agent : undefined };
}

function targetOf(request: FastifyRequest, route: AuditedRoute, answer: unknown): AuditEntry['target'] {
  if (route.account) return { type: route.targetType, id: request.principal?.userId };
  const decided = decisionOf(request)?.resource;
  if (decided) return { type: decided.type, id: decided.id ?? decided.key };
  const params = request.params as Record<string, string | undefined>;
  if (route.targetParam !== undefined) return { type: route.targetType, id: params[route.targetParam] };
  const created = (answer as { id?: unknown } | null | undefined)?.id;
  if (typeof created === 'string') return { type: route.targetType, id: created };
  return route.owner ? { type: route.owner.targetType, id: params[route.owner.targetParam] } : { type: route.targetType };
}

function entryOf(request: FastifyRequest, route: AuditedRoute, outcome: AuditOutcome, answer: unknown, reason?: string): AuditEntry {
  const decision = decisionOf(request);
  return {
    projectId: route.account ? null : (request.params as { project_id: string }).project_id,
    actor: auditActor(request.principal!),
    action: decision?.action ?? route.action,
    target: targetOf(request, route, answer),
    outcome,
    reason,
    origin: auditOrigin(request),
  };
}

/** Installs the step on every audited route (and only there). */
export function installAudit(app: FastifyInstance, db: Db, log: AuditLog): void {
  app.addHook('onRoute', (route) => {
    for (const method of [route.method].flat()) {
      const account = accountAction({ method, url: route.url, config: route.config });
      const audited = account ?? auditAction({ method, url: route.url, config: route.config });
      if (!audited) continue;
      const handler = route.handler;
      route.handler = function audit(this: FastifyInstance, request: FastifyRequest, reply: FastifyReply) {
        // A body that arrives as a stream (an upload) is not waited for inside a transaction, which
        // would hold the embedded database's one connection for as long as the client takes: its
        // entry is written as soon as it succeeded, by its own statement (not grouped with others,
        // which would keep the answer waiting for the group).
        if (request.body instanceof Readable) {
          return (async () => {
            const answer = await handler.call(this, request, reply);
            if (reply.statusCode < 400) await log.write(db, entryOf(request, audited, 'succeeded', answer));
            return answer;
          })();
        }
        if (audited.inStatement) return inStatement(db, log, audited, handler.bind(this), request, reply);
        return inTransaction(db, log, audited, handler.bind(this), request, reply);
      };
      // Refusals are the authority check's, in a project.
      if (account) break;
      // A refusal is known once the error is: the auth hook's, the project role's, or the resource step's.
      const refused = (request: FastifyRequest, r: FastifyReply, done: () => void) => {
        const refusal = refusalOf(request, r.statusCode);
        if (refusal !== undefined) void log.later(entryOf(request, audited, 'refused', undefined, refusal)).catch((error: unknown) => request.log.error({ err: error }, 'audit entry of a refusal not written'));
        done();
      };
      route.onResponse = [...[route.onResponse ?? []].flat(), refused];
      break;
    }
  });
}

/**
 * Why the request was refused by the authority check, or undefined: only callers acting in the
 * project (holding some role there) are recorded, so that strangers cannot fill a project's log.
 */
function refusalOf(request: FastifyRequest, status: number): string | undefined {
  if (!request.principal || !request.access) return undefined;
  const decision = decisionOf(request);
  if (decision && !decision.allowed) return decision.reason;
  if (status === 403) return 'the caller lacks the role or right the action needs';
  return undefined;
}

/**
 * Runs `run`, holding an answer the handler sends until `run` is done (its entry written): the held
 * send returns nothing, since a reply is a thenable that settles once sent, so a handler returning
 * it would wait for itself.
 */
async function holdingAnswer(reply: FastifyReply, run: (answerOf: (value: unknown) => unknown) => Promise<unknown>): Promise<unknown> {
  let sent: { payload: unknown } | undefined;
  const hold = reply as unknown as { send: (payload: unknown) => undefined };
  hold.send = (payload) => {
    sent = { payload };
    return undefined;
  };
  let returned: unknown;
  try {
    returned = await run((value) => (sent ? sent.payload : value));
  } finally {
    delete (hold as { send?: unknown }).send;
  }
  if (sent) return reply.send(sent.payload);
  return returned;
}

const succeeded = (reply: FastifyReply, answer: unknown) => reply.statusCode < 400 && !(answer instanceof Error);

async function inTransaction(db: Db, log: AuditLog, audited: AuditedRoute, handler: (request: FastifyRequest, reply: FastifyReply) => unknown, request: FastifyRequest, reply: FastifyReply): Promise<unknown> {
  return holdingAnswer(reply, (answerOf) => inRequestTransaction(db, async () => {
    const value = await handler(request, reply);
    const answer = answerOf(value);
    // Through the service's handle, which stands for the transaction in flight here: the entry's
    // statement is built once for the database rather than once per transaction.
    if (succeeded(reply, answer)) await log.write(db, entryOf(request, audited, 'succeeded', answer));
    return value;
  }));
}

/** A route whose change is one statement, which writes the entry with it; when nothing changed (an existing resource answered), the entry is written after. */
async function inStatement(db: Db, log: AuditLog, audited: AuditedRoute, handler: (request: FastifyRequest, reply: FastifyReply) => unknown, request: FastifyRequest, reply: FastifyReply): Promise<unknown> {
  return holdingAnswer(reply, async (answerOf) => {
    const entry = (targetId: string | undefined) => entryOf(request, audited, 'succeeded', targetId === undefined ? undefined : { id: targetId });
    const { value, written } = await log.pending(entry, async () => handler(request, reply));
    const answer = answerOf(value);
    if (!written && succeeded(reply, answer)) await log.write(db, entryOf(request, audited, 'succeeded', answer));
    return value;
  });
}
