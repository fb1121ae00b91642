// How to create one real resource of each kind the modules' routes address, by module name: the
// isolation walk and the fuzz (test/support/walk.ts) fill every route's path parameters (and
// required query parameters, such as storage's `path`) from them — first from the fixtures of the
// route's own module, then from any module's. A route with a parameter no fixture provides fails
// those suites, so a new module adds its fixtures here.

/** A client bound to one project's admin. */
export interface FixtureClient {
  readonly projectId: string;
  /** The admin user's id. */
  readonly userId: string;
  /**
   * Sends a request as the project's admin (its API key, or its user token with `as: 'user'`); a
   * JSON body by default. Fails the fixture on a non-2xx answer; resolves to the parsed body.
   */
  request<T = any>(method: string, path: string, options?: { json?: unknown; bytes?: string; as?: 'api_key' | 'user' }): Promise<T>;
  /** A new user account outside the project (sign-up is not an API route). */
  newUser(): Promise<{ id: string; email: string }>;
}

/**
 * Creates one real resource in a project and returns the parameters that address it. `needs` names
 * parameters of other fixtures, which are created first.
 */
export interface Fixture {
  readonly provides: readonly string[];
  readonly needs?: readonly string[];
  create(client: FixtureClient, have: Readonly<Record<string, string>>): Promise<Record<string, string>>;
}

/** A short random suffix that keeps fixture names unique within a project. */
const fixtureSuffix = (): string => Math.random().toString(36).slice(2, 10);

const SECRET_VALUE = Buffer.from('{"API_KEY":"fixture"}').toString('base64');
const serviceSpec = (name: string) => ({ version: 'v1', kind: 'Service', metadata: { name }, container: { image: 'ghcr.io/example/echo:1' } });
const externalRegistration = {
  oauth: { authorization_endpoint: 'https://accounts.example.com/authorize', token_endpoint: 'https://accounts.example.com/token' },
  client_id: 'fixture-client',
  client_secret: 'fixture-secret',
};

export const FIXTURES: Readonly<Record<string, readonly Fixture[]>> = {
  'agents': [{
    provides: ['agent_name', 'agent_id'],
    async create(client) {
      const name = `agent-${fixtureSuffix()}`;
      const agent = await client.request<{ id: string }>('POST', `/accounts/projects/${client.projectId}/agents`, { json: { configuration: { metadata: { name } } } });
      return { agent_name: name, agent_id: agent.id };
    },
  }],
  'api-keys': [{
    provides: ['id'],
    async create(client) {
      const key = await client.request<{ id: string }>('POST', `/accounts/projects/${client.projectId}/api-keys`, { json: { name: `key-${fixtureSuffix()}` } });
      return { id: key.id };
    },
  }],
  'billing': [{
    provides: ['checkout_id'],
    async create(client) {
      const { checkout_url } = await client.request<{ checkout_url: string }>('POST', `/accounts/projects/${client.projectId}/credits`, {
        json: { success_url: 'https://app.example.com/ok', cancel_url: 'https://app.example.com/cancel', quantity: 5 },
      });
      return { checkout_id: checkout_url.split('/').at(-1)! };
    },
  }],
  'external-oauth': [{
    provides: ['registration_id'],
    async create(client) {
      const created = await client.request<{ id: string }>('POST', `/accounts/projects/${client.projectId}/external-oauth`, { json: externalRegistration });
      return { registration_id: created.id };
    },
  }, {
    provides: ['room_registration_id'],
    needs: ['room_name'],
    async create(client, have) {
      const created = await client.request<{ id: string }>('POST', `/accounts/projects/${client.projectId}/rooms/${encodeURIComponent(have.room_name!)}/external-oauth`, { json: externalRegistration });
      return { room_registration_id: created.id };
    },
  }],
  'feeds': [{
    provides: ['feed_id', 'subscription_id'],
    needs: ['room_name'],
    async create(client, have) {
      const project = `/accounts/projects/${client.projectId}`;
      const { feed } = await client.request<{ feed: { id: string } }>('POST', `${project}/feeds`, { json: { name: `feed-${fixtureSuffix()}`, visibility: 'project' } });
      const { subscription } = await client.request<{ subscription: { id: string } }>('POST', `${project}/feeds/${feed.id}/subscriptions`, {
        json: { room: have.room_name, path: 'feeds/fixture' },
      });
      return { feed_id: feed.id, subscription_id: subscription.id };
    },
  }],
  'llm-loggers': [{
    provides: ['logger_id'],
    needs: ['feed_id'],
    async create(client, have) {
      const { logger } = await client.request<{ logger: { id: string } }>('POST', `/accounts/projects/${client.projectId}/llm-loggers`, {
        json: { destination_feed_id: have.feed_id, filter_expression: "provider == 'openai'" },
      });
      return { logger_id: logger.id };
    },
  }],
  'mailboxes': [{
    provides: ['address'],
    needs: ['room_name'],
    async create(client, have) {
      // The walks run with ATRIUM_MAIL_DOMAINS set to the test domain (test/support/service.ts).
      const address = `box-${fixtureSuffix()}@mail.example.test`;
      await client.request('POST', `/accounts/projects/${client.projectId}/mailboxes`, { json: { address, room: have.room_name, queue: 'inbox' } });
      return { address };
    },
  }],
  'oauth-clients': [{
    provides: ['client_id'],
    async create(client) {
      const created = await client.request<{ client_id: string }>('POST', `/accounts/projects/${client.projectId}/oauth/clients`, {
        json: { name: `app-${fixtureSuffix()}`, grant_types: ['authorization_code'], response_types: ['code'], redirect_uris: ['https://app.example.com/callback'], scope: 'openid profile:read' },
      });
      return { client_id: created.client_id };
    },
  }],
  'policies': [{
    provides: ['resource_type', 'resource_id'],
    needs: ['room_id'],
    create: async (_client, have) => ({ resource_type: 'room', resource_id: have.room_id! }),
  }],
  'projects': [{
    provides: ['user_id'],
    async create(client) {
      const user = await client.newUser();
      await client.request('POST', `/accounts/projects/${client.projectId}/users`, { json: { user_id: user.id, roles: ['member'] } });
      return { user_id: user.id };
    },
  }, {
    provides: ['invitation_id'],
    async create(client) {
      const response = await client.request<{ invitation: { id: string } }>('POST', `/accounts/projects/${client.projectId}/users`, { json: { email: `invitee-${crypto.randomUUID()}@example.com`, roles: ['member'] } });
      return { invitation_id: response.invitation.id };
    },
  }],
  'repositories': [{
    provides: ['repository_id'],
    async create(client) {
      const repository = await client.request<{ id: string }>('POST', `/accounts/projects/${client.projectId}/repositories`, { json: { name: `fixture/repo-${fixtureSuffix()}` } });
      return { repository_id: repository.id };
    },
  }],
  'room-secrets': [{
    provides: ['secret_id'],
    needs: ['room_name'],
    async create(client, have) {
      const path = `/accounts/projects/${client.projectId}/rooms/${encodeURIComponent(have.room_name!)}/secrets`;
      const created = await client.request<{ id: string }>('POST', path, { json: { name: `room-secret-${fixtureSuffix()}`, type: 'keys', data_base64: SECRET_VALUE } });
      return { secret_id: created.id };
    },
  }],
  'room-services': [{
    provides: ['service_id'],
    needs: ['room_name'],
    async create(client, have) {
      const path = `/accounts/projects/${client.projectId}/rooms/${encodeURIComponent(have.room_name!)}/services`;
      const created = await client.request<{ id: string }>('POST', path, { json: serviceSpec(`room-svc-${fixtureSuffix()}`) });
      return { service_id: created.id };
    },
  }],
  'rooms': [{
    provides: ['room_name', 'room_id'],
    async create(client) {
      const room = await client.request<{ id: string; name: string }>('POST', `/accounts/projects/${client.projectId}/rooms`, { json: { name: `room-${fixtureSuffix()}` } });
      return { room_name: room.name, room_id: room.id };
    },
  }],
  'routes': [{
    provides: ['domain'],
    needs: ['room_name'],
    async create(client, have) {
      const domain = `r-${fixtureSuffix()}.routes.example.test`;
      await client.request('POST', `/accounts/projects/${client.projectId}/routes`, { json: { domain, room_name: have.room_name, port: 8080 } });
      return { domain };
    },
  }],
  'scheduled-tasks': [{
    provides: ['task_id'],
    needs: ['room_name'],
    async create(client, have) {
      const created = await client.request<{ task_id: string }>('POST', `/accounts/projects/${client.projectId}/rooms/${encodeURIComponent(have.room_name!)}/scheduled-tasks`, {
        json: { spec: { schedule: '0 6 * * *', queue: { name: `queue-${fixtureSuffix()}`, payload: {} } } },
      });
      return { task_id: created.task_id };
    },
  }],
  'secrets': [{
    provides: ['secret_id'],
    async create(client) {
      const created = await client.request<{ id: string }>('POST', `/accounts/projects/${client.projectId}/secrets`, { json: { name: `secret-${fixtureSuffix()}`, type: 'keys', data_base64: SECRET_VALUE } });
      return { secret_id: created.id };
    },
  }],
  'services': [{
    provides: ['service_id'],
    async create(client) {
      const created = await client.request<{ id: string }>('POST', `/accounts/projects/${client.projectId}/services`, { json: serviceSpec(`svc-${fixtureSuffix()}`) });
      return { service_id: created.id };
    },
  }],
  'sessions': [{
    provides: ['session_id'],
    needs: ['room_name'],
    async create(client, have) {
      const project = `/accounts/projects/${client.projectId}`;
      const session = await client.request<{ id: string }>('POST', `${project}/sessions`, { json: { room_name: have.room_name } });
      // Some telemetry, so that the reads have items to return.
      await client.request('POST', `${project}/sessions/${session.id}/participants`, { json: { events: [{ type: 'joined', participant_id: `p-${fixtureSuffix()}`, role: 'user' }] } });
      return { session_id: session.id };
    },
  }],
  'shares': [{
    provides: ['share_id'],
    needs: ['room_name'],
    async create(client, have) {
      const share = await client.request<{ id: string }>('POST', `/accounts/projects/${client.projectId}/shares`, { json: { settings: { room: have.room_name } } });
      return { share_id: share.id };
    },
  }],
  'storage': [{
    // A file of a room's storage, so that the walks reach the room's rule for its files.
    provides: ['path'],
    needs: ['room_name'],
    async create(client, have) {
      const path = `rooms/${have.room_name}/fixtures/file-${fixtureSuffix()}.txt`;
      await client.request('POST', `/projects/${client.projectId}/storage/upload?path=${encodeURIComponent(path)}`, { bytes: 'fixture' });
      return { path };
    },
  }],
  'users': [
    // A profile route addresses a user; the project's admin is the one whose profile they may edit.
    { provides: ['user_id'], create: async (client) => ({ user_id: client.userId }) },
    // A passkey is made only by a browser's WebAuthn ceremony after a fresh sign-in, which no
    // fixture credential has: the walks address a passkey id that is nobody's, which every caller
    // must be refused (the passkey tests cover real ones).
    { provides: ['passkey_id'], create: async () => ({ passkey_id: crypto.randomUUID() }) },
  ],
  'webhooks': [{
    provides: ['webhook_id', 'delivery_id'],
    async create(client) {
      const project = `/accounts/projects/${client.projectId}`;
      const webhook = await client.request<{ id: string }>('POST', `${project}/webhooks`, {
        json: { name: `hook-${fixtureSuffix()}`, url: 'https://receiver.example.com/atrium', events: ['storage.file.updated'] },
      });
      // One event gives the webhook a delivery.
      await client.request('POST', `/projects/${client.projectId}/storage/upload?path=${encodeURIComponent(`fixtures/hook-${fixtureSuffix()}.txt`)}`, { bytes: 'event' });
      const { deliveries } = await client.request<{ deliveries: { id: string }[] }>('GET', `${project}/webhooks/${webhook.id}/deliveries`);
      return { webhook_id: webhook.id, delivery_id: deliveries[0]!.id };
    },
  }],
};
