// LLM loggers on both engines: the official SDK's CRUD, JMESPath filters compiled at create and
// update (the parser's message on a 400), and the whole chain — a call through the LLM proxy, the
// logger's filter, the destination feed, its subscription, a .jsonl file in room storage, and the
// storage.file.updated webhook for it.
import assert from 'node:assert/strict';
import { createRequire } from 'node:module';
import { after, before, test } from 'node:test';
import OpenAI from 'openai';
import Anthropic from '@anthropic-ai/sdk';
import type * as Sdk from '@meshagent/meshagent';
import { startFakeUpstream, type FakeUpstream } from '../support/llm-upstream.ts';
import { call, createTenant, forEachEngine, startTestService, type Tenant, type TestService } from '../support/service.ts';
import { eventually, startReceiver, type Receiver } from '../support/webhooks.ts';

const require = createRequire(import.meta.url);
const { Meshagent, RoomException } = require('@meshagent/meshagent') as typeof Sdk;

forEachEngine('LLM loggers', (engine) => {
  let upstream: FakeUpstream;
  let receiver: Receiver;
  let service: TestService;
  let tenant: Tenant;
  let sdk: InstanceType<typeof Meshagent>;

  before(async () => {
    upstream = await startFakeUpstream();
    receiver = await startReceiver();
    service = await startTestService(engine, {
      ATRIUM_OPENAI_BASE_URL: `${upstream.url}/v1`,
      ATRIUM_OPENAI_API_KEY: 'sk-operator',
      ATRIUM_ANTHROPIC_BASE_URL: upstream.url,
      ATRIUM_ANTHROPIC_API_KEY: 'sk-operator',
      ATRIUM_FEEDS_FLUSH_SECONDS: '1',
      ATRIUM_WEBHOOKS_ALLOW_PRIVATE: 'true',
    });

    tenant = await createTenant(service, 'loggers');
    sdk = new Meshagent({ baseUrl: service.url, token: tenant.apiKey });
  });
  after(async () => {
    await service?.stop();
    await receiver?.close();
    await upstream?.close();
  });

  test('the SDK creates, reads, lists, replaces and deletes loggers; filters and destinations are checked', async () => {
    const feed = await sdk.createFeed({ projectId: tenant.projectId, name: 'llm-log' });
    const logger = await sdk.createLLMLogger({ projectId: tenant.projectId, destinationFeedId: feed.id, filterExpression: '  `true`  ', annotations: { env: 'test' } });
    assert.deepEqual([logger.destinationFeedId, logger.filterExpression, logger.paused, logger.annotations], [feed.id, '`true`', false, { env: 'test' }]);
    await sdk.updateLLMLogger({ projectId: tenant.projectId, loggerId: logger.id, destinationFeedId: feed.id, filterExpression: "model == 'x'", paused: true });
    const updated = await sdk.getLLMLogger(tenant.projectId, logger.id);
    assert.deepEqual([updated.filterExpression, updated.paused, updated.annotations], ["model == 'x'", true, {}]);
    assert.deepEqual((await sdk.listLLMLoggers(tenant.projectId)).map((l) => l.id), [logger.id]);

    const invalid = await call(service, 'POST', `/accounts/projects/${tenant.projectId}/llm-loggers`, { token: tenant.apiKey, json: { destination_feed_id: feed.id, filter_expression: 'usage.[' } });
    assert.equal(invalid.status, 400);
    assert.match(invalid.body.error.message, /filter_expression is not valid JMESPath: .+/);
    const elsewhere = await createTenant(service, 'loggers-other');
    const otherFeed = (await call(service, 'POST', `/accounts/projects/${elsewhere.projectId}/feeds`, { token: elsewhere.apiKey, json: { name: 'theirs' } })).body.feed;
    const foreign = await call(service, 'POST', `/accounts/projects/${tenant.projectId}/llm-loggers`, { token: tenant.apiKey, json: { destination_feed_id: otherFeed.id, filter_expression: '`true`' } });
    assert.equal(foreign.status, 400, 'a feed of another project is no destination');

    await sdk.deleteLLMLogger(tenant.projectId, logger.id);
    await assert.rejects(sdk.getLLMLogger(tenant.projectId, logger.id), (error: unknown) => error instanceof RoomException && /Status code: 404/.test((error as Error).message));
  });

  test('a logger publishes only into a feed its creator may publish to; one they cannot see is not there', async () => {
    const project = `/accounts/projects/${tenant.projectId}`;
    const feed = async (name: string, visibility: string) => (await call(service, 'POST', `${project}/feeds`, { token: tenant.apiKey, json: { name, visibility } })).body.feed as { id: string };
    const open = await feed('logged-open', 'project');
    const hidden = await feed('logged-hidden', 'private');
    const key = (await call(service, 'POST', `${project}/api-keys`, { token: tenant.apiKey, json: { name: 'logger-maker', roles: ['llm_logger_creator'] } })).body as { id: string; value: string };
    const create = (feedId: string) => call(service, 'POST', `${project}/llm-loggers`, { token: key.value, json: { destination_feed_id: feedId, filter_expression: '`true`' } });
    const count = async () => (await call(service, 'GET', `${project}/llm-loggers`, { token: tenant.apiKey })).body.loggers.length as number;
    const before = await count();

    const refused = await create(open.id);
    assert.equal(refused.status, 403, JSON.stringify(refused.body));
    assert.match(refused.body.error.message, /feed_manager/, 'the refusal names who may publish');
    const unseen = await create(hidden.id);
    assert.equal(unseen.status, 400, 'a private feed the caller cannot see answers as a missing one');
    assert.match(unseen.body.error.message, /no such feed/);
    assert.equal(await count(), before, 'nothing was created');
    // The publisher role on the feed's policy is enough.
    const granted = await call(service, 'POST', `${project}/policies/resources/feed/${open.id}`, { token: tenant.apiKey, json: { subject: { type: 'service_account', id: key.id }, roles: ['publisher'] } });
    assert.equal(granted.status, 200, JSON.stringify(granted.body));
    assert.equal((await create(open.id)).status, 201);
  });

  test('the chain: proxy call → logger filter → feed → subscription → .jsonl in room storage → storage.file.updated', async () => {
    const project = `/accounts/projects/${tenant.projectId}`;
    await call(service, 'POST', `${project}/rooms`, { token: tenant.apiKey, json: { name: 'llm-audit' } });
    await call(service, 'POST', `${project}/webhooks`, { token: tenant.apiKey, json: { name: 'audit files', url: `${receiver.url}/audit`, events: ['storage.file.updated'] } });
    const feed = await sdk.createFeed({ projectId: tenant.projectId, name: 'llm-calls', messageSchema: { type: 'object', required: ['request_id', 'provider'] } });
    await sdk.createFeedSubscription({ projectId: tenant.projectId, feedId: feed.id, room: 'llm-audit', path: 'llm' });
    await sdk.createLLMLogger({ projectId: tenant.projectId, destinationFeedId: feed.id, filterExpression: "provider == 'openai' && usage.output_tokens > `5` && annotations.team == 'search'" });
    await sdk.createLLMLogger({ projectId: tenant.projectId, destinationFeedId: feed.id, filterExpression: '`true`', paused: true });

    const openai = new OpenAI({ apiKey: tenant.apiKey, baseURL: `${service.url}/openai/v1`, maxRetries: 0, defaultHeaders: { 'x-meshagent-annotation-team': 'search' } });
    const matching = await openai.chat.completions.create({ model: 'fake-chat', messages: [{ role: 'user', content: 'Hi' }] }).withResponse();
    const requestId = matching.response.headers.get('atrium-request-id');
    // Neither the other provider nor a call without the annotation matches.
    await new Anthropic({ apiKey: tenant.apiKey, baseURL: `${service.url}/anthropic`, maxRetries: 0, defaultHeaders: { 'x-meshagent-annotation-team': 'search' } })
      .messages.create({ model: 'fake-claude', max_tokens: 8, messages: [{ role: 'user', content: 'Hi' }] });
    await new OpenAI({ apiKey: tenant.apiKey, baseURL: `${service.url}/openai/v1`, maxRetries: 0 }).chat.completions.create({ model: 'fake-chat', messages: [] });

    const delivered = await receiver.waitFor((all) => all.some((r) => r.url === '/audit' && String(r.json?.data?.path).startsWith('rooms/llm-audit/llm/')), 30_000)
      .then(() => receiver.received.find((r) => r.url === '/audit')!);
    const path = delivered.json.data.path as string;
    assert.match(path, /^rooms\/llm-audit\/llm\/.+\.jsonl$/);
    const file = await call(service, 'GET', `/projects/${tenant.projectId}/storage/download?path=${encodeURIComponent(path)}`, { token: tenant.apiKey });
    const lines = String(file.body).split('\n').filter(Boolean).map((l) => JSON.parse(l));
    assert.equal(lines.length, 1, 'only the matching call, and once');
    assert.equal(lines[0].request_id, requestId);
    assert.deepEqual([lines[0].provider, lines[0].model, lines[0].outcome, lines[0].usage.output_tokens, lines[0].annotations], ['openai', 'fake-chat', 'completed', 7, { team: 'search' }]);
    assert.equal(lines[0].credential.kind, 'api_key');
    // Nothing else arrives: the other two calls' events were looked at and not copied.
    await eventually(async () => (await call(service, 'GET', `/projects/${tenant.projectId}/storage?path=${encodeURIComponent('rooms/llm-audit/llm')}`, { token: tenant.apiKey })).body.files.length === 1);
  });
});
