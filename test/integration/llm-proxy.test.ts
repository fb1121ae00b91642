// The LLM proxy on both engines, driven by the official OpenAI and Anthropic SDKs against a fake
// upstream that speaks both wire formats: plain and streamed calls, tool calls, the Responses API,
// embeddings, models, token counts; the credentials (API keys, also as x-api-key; OAuth tokens
// with llm:invoke and the project header; participant tokens with an api.llm grant) and each way
// of lacking one; provider errors, mid-stream errors, cut streams and client aborts; and the one
// usage record per call that billing prices.
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, afterEach, before, describe, test } from 'node:test';
import { sql } from 'drizzle-orm';
import OpenAI from 'openai';
import Anthropic from '@anthropic-ai/sdk';
import * as oidc from 'openid-client';
import { verifyLedger } from '../../src/modules/billing/service.ts';
import { recordCalls } from '../../src/modules/llm-proxy/store.ts';
import { rowsOf } from '../../src/platform/db/rows.ts';
import { EMAIL_LOGIN_ENV, FormBrowser, authorizationRequest, discover, insertClient, signInAndConsent, type TestClient } from '../support/oauth.ts';
import { FAKE_USAGE, startFakeUpstream, type FakeUpstream } from '../support/llm-upstream.ts';
import { call, createTenant, createUserWithToken, forEachEngine, startTestService, type Tenant, type TestService } from '../support/service.ts';
import { eventually } from '../support/webhooks.ts';

const OPENAI_KEY = 'sk-operator-openai-secret';
const ANTHROPIC_KEY = 'sk-operator-anthropic-secret';

interface UsageRow {
  request_id: string;
  credential_kind: string;
  user_id: string | null;
  client_id: string | null;
  participant: string | null;
  provider: string;
  endpoint: string;
  model: string | null;
  stream: boolean;
  status: number;
  outcome: string;
  usage_source: string;
  input_tokens: string;
  cached_input_tokens: string;
  cache_write_tokens: string;
  output_tokens: string;
  reasoning_tokens: string;
  ttfb_ms: number | null;
  annotations: Record<string, string>;
}

forEachEngine('LLM proxy', (engine) => {
  let upstream: FakeUpstream;
  let service: TestService;
  let tenant: Tenant;

  before(async () => {
    upstream = await startFakeUpstream();
    service = await startTestService(engine, {
      ...EMAIL_LOGIN_ENV,
      ATRIUM_OPENAI_BASE_URL: `${upstream.url}/v1`,
      ATRIUM_OPENAI_API_KEY: OPENAI_KEY,
      ATRIUM_ANTHROPIC_BASE_URL: upstream.url,
      ATRIUM_ANTHROPIC_API_KEY: ANTHROPIC_KEY,
    });
    tenant = await createTenant(service, 'llm');
  });
  after(async () => {
    await service?.stop();
    await upstream?.close();
  });
  // Every call is priced (default prices): the books hold after each test.
  afterEach(async () => assert.deepEqual([...await verifyLedger(service.ctx.db)], []));

  const openai = (apiKey: string, headers: Record<string, string> = {}) => new OpenAI({ apiKey, baseURL: `${service.url}/openai/v1`, maxRetries: 0, defaultHeaders: headers });
  const anthropic = (options: { apiKey?: string; authToken?: string; headers?: Record<string, string> }) =>
    new Anthropic({ ...options, apiKey: options.apiKey ?? null, authToken: options.authToken ?? null, baseURL: `${service.url}/anthropic`, maxRetries: 0, defaultHeaders: options.headers ?? {} });

  /** The usage record of a call, once it is written (after the answer completed). */
  async function usageOf(requestId: string | null | undefined): Promise<UsageRow> {
    assert.ok(requestId, 'the answer names its request id');
    return eventually(async () => rowsOf<UsageRow>(await service.ctx.db.execute(sql`select * from llm_usage where request_id = ${requestId}::uuid`))[0]);
  }
  const tokens = (row: UsageRow) => [row.input_tokens, row.cached_input_tokens, row.cache_write_tokens, row.output_tokens, row.reasoning_tokens].map(Number);
  /** OpenAI input counts include cached tokens; the record's do not. */
  const OPENAI_TOKENS = [FAKE_USAGE.input - FAKE_USAGE.cached, FAKE_USAGE.cached, 0, FAKE_USAGE.output, FAKE_USAGE.reasoning];
  const ANTHROPIC_TOKENS = [FAKE_USAGE.input, FAKE_USAGE.cached, FAKE_USAGE.cacheWrite, FAKE_USAGE.output, 0];
  const lastUpstream = () => upstream.requests.at(-1)!;

  describe('OpenAI', () => {
    test('chat completions, plain: the operator\'s key goes upstream, the caller\'s never; one usage record', async () => {
      const { data, response } = await openai(tenant.apiKey, { 'x-meshagent-annotation-team': 'search' }).chat.completions
        .create({ model: 'fake-chat', messages: [{ role: 'user', content: 'Hi' }] }).withResponse();
      assert.equal(data.choices[0]!.message.content, 'Hello from the fake.');
      assert.equal(response.headers.get('x-request-id'), 'req_fake_1');
      const sent = lastUpstream();
      assert.equal(sent.path, '/v1/chat/completions');
      assert.equal(sent.headers.authorization, `Bearer ${OPENAI_KEY}`);
      assert.ok(!JSON.stringify(sent.headers).includes(tenant.apiKey), 'the caller\'s credential stays here');
      assert.deepEqual(sent.body, { model: 'fake-chat', messages: [{ role: 'user', content: 'Hi' }] });
      const row = await usageOf(response.headers.get('atrium-request-id'));
      assert.deepEqual([row.provider, row.endpoint, row.model, row.stream, row.status, row.outcome, row.usage_source, row.credential_kind], ['openai', '/v1/chat/completions', 'fake-chat', false, 200, 'completed', 'provider', 'api_key']);
      assert.deepEqual(tokens(row), OPENAI_TOKENS);
      assert.deepEqual(row.annotations, { team: 'search' });
    });

    test('chat completions, streamed: usage is asked for upstream and its extra chunk kept from a client that did not ask', async () => {
      const { data: stream, response } = await openai(tenant.apiKey).chat.completions.create({ model: 'fake-chat', stream: true, messages: [{ role: 'user', content: 'Hi' }] }).withResponse();
      const chunks = [];
      for await (const chunk of stream) chunks.push(chunk);
      assert.equal(chunks.map((c) => c.choices[0]?.delta.content ?? '').join(''), 'Hello from the fake.');
      assert.ok(chunks.every((c) => c.choices.length > 0 && !('usage' in c && c.usage)), 'no usage chunk for a client that did not ask');
      assert.deepEqual(lastUpstream().body.stream_options, { include_usage: true });
      const row = await usageOf(response.headers.get('atrium-request-id'));
      assert.deepEqual([row.stream, row.outcome, row.usage_source], [true, 'completed', 'provider']);
      assert.deepEqual(tokens(row), OPENAI_TOKENS);

      // A client that asks gets the chunk, byte for byte as the provider sent it.
      const asked = await openai(tenant.apiKey).chat.completions.create({ model: 'fake-chat', stream: true, stream_options: { include_usage: true }, messages: [{ role: 'user', content: 'Hi' }] });
      let usage;
      for await (const chunk of asked) if (chunk.usage) usage = chunk.usage;
      assert.equal(usage?.prompt_tokens, FAKE_USAGE.input);
    });

    test('streamed tool calls, the Responses API (plain and streamed), embeddings, models', async () => {
      const client = openai(tenant.apiKey);
      const tools = [{ type: 'function' as const, function: { name: 'weather', parameters: { type: 'object', properties: { city: { type: 'string' } } } } }];
      const runner = client.chat.completions.stream({ model: 'fake-tools', messages: [{ role: 'user', content: 'Weather?' }], tools });
      const final = await runner.finalChatCompletion();
      assert.equal((final.choices[0]!.message.tool_calls?.[0] as { function: { arguments: string } }).function.arguments, '{"city":"Paris"}');

      const plain = await client.responses.create({ model: 'fake-resp', input: 'Hi' }).withResponse();
      assert.equal(plain.data.output_text, 'Hi.');
      assert.deepEqual(tokens(await usageOf(plain.response.headers.get('atrium-request-id'))), OPENAI_TOKENS);
      const { data: streamed, response: streamedResponse } = await client.responses.create({ model: 'fake-resp', input: 'Hi', stream: true }).withResponse();
      const types = [];
      for await (const event of streamed) types.push(event.type);
      assert.deepEqual(types, ['response.created', 'response.output_text.delta', 'response.completed']);
      assert.equal(lastUpstream().body.stream_options, undefined, 'no include_usage on the Responses API');
      assert.deepEqual(tokens(await usageOf(streamedResponse.headers.get('atrium-request-id'))), OPENAI_TOKENS);

      const embedding = await client.embeddings.create({ model: 'fake-embed', input: 'x' }).withResponse();
      assert.deepEqual(embedding.data.data[0]!.embedding, [0.1, 0.2]);
      assert.equal(Number((await usageOf(embedding.response.headers.get('atrium-request-id'))).input_tokens), FAKE_USAGE.input);
      const models = [];
      for await (const model of client.models.list()) models.push(model.id);
      assert.deepEqual(models, ['gpt-fake']);
      assert.equal((await client.models.retrieve('ft:gpt-fake:org:1')).id, 'ft:gpt-fake:org:1');
      assert.equal(lastUpstream().path, '/v1/models/ft%3Agpt-fake%3Aorg%3A1');
    });

    test('provider errors come back with their status and the headers clients act on; mid-stream errors and cut streams are recorded', async () => {
      const client = openai(tenant.apiKey);
      await assert.rejects(client.chat.completions.create({ model: 'fake-429', messages: [] }), (error: unknown) => {
        assert.ok(error instanceof OpenAI.RateLimitError);
        assert.equal(error.headers?.get('retry-after'), '7');
        assert.equal(error.headers?.get('x-ratelimit-remaining-requests'), '0');
        return true;
      });
      const midstream = await client.chat.completions.create({ model: 'fake-midstream', stream: true, messages: [] }).withResponse();
      await assert.rejects(async () => { for await (const _chunk of midstream.data) { /* until the error */ } }, OpenAI.APIError);
      assert.equal((await usageOf(midstream.response.headers.get('atrium-request-id'))).outcome, 'upstream_error');

      const cut = await client.chat.completions.create({ model: 'fake-cut', stream: true, messages: [] }).withResponse();
      await assert.rejects(async () => { for await (const _chunk of cut.data) { /* until the cut */ } });
      const row = await usageOf(cut.response.headers.get('atrium-request-id'));
      assert.deepEqual([row.outcome, row.usage_source], ['upstream_cut', 'missing']);
    });

    test('a plain answer is sent whole with its length; one over 1 MiB is streamed as it comes; one cut short is a 502', async () => {
      const client = openai(tenant.apiKey);
      const plain = await client.chat.completions.create({ model: 'fake-chat', messages: [] }).withResponse();
      assert.equal(plain.response.headers.get('transfer-encoding'), null, 'not chunked');
      assert.equal(Number(plain.response.headers.get('content-length')), Buffer.byteLength(JSON.stringify(plain.data)));

      const large = await client.chat.completions.create({ model: 'fake-large', messages: [] }).withResponse();
      assert.equal(large.data.choices[0]!.message.content, 'x'.repeat(1_500_000));
      assert.equal(large.response.headers.get('transfer-encoding'), 'chunked', 'streamed, as the upstream sent it');
      const largeRow = await usageOf(large.response.headers.get('atrium-request-id'));
      assert.deepEqual([largeRow.outcome, largeRow.usage_source, largeRow.model], ['completed', 'provider', 'fake-large']);
      assert.deepEqual(tokens(largeRow), OPENAI_TOKENS);

      await assert.rejects(client.chat.completions.create({ model: 'fake-cut-plain', messages: [] }), (error: unknown) => {
        assert.ok(error instanceof OpenAI.APIError);
        assert.equal(error.status, 502);
        assert.match(error.message, /cut its answer short/);
        return true;
      });
      const cut = await eventually(async () => rowsOf<UsageRow>(await service.ctx.db.execute(sql`
        select * from llm_usage where project_id = ${tenant.projectId}::uuid and model = 'fake-cut-plain'`))[0]);
      assert.deepEqual([cut.status, cut.outcome, cut.usage_source], [502, 'upstream_cut', 'missing']);
    });

    test('a client that aborts a stream takes the upstream call with it; what was seen is recorded', async () => {
      const abortedBefore = upstream.aborted;
      const controller = new AbortController();
      const { data: stream, response } = await openai(tenant.apiKey).chat.completions.create({ model: 'fake-slow', stream: true, messages: [] }, { signal: controller.signal }).withResponse();
      const seen: string[] = [];
      try {
        for await (const chunk of stream) {
          seen.push(chunk.choices[0]?.delta.content ?? '');
          if (seen.includes('Hello')) controller.abort();
        }
      } catch (error) {
        assert.equal((error as Error).name, 'APIUserAbortError');
      }
      assert.ok(!seen.join('').includes('fake.'), 'the client stopped before the end');
      const row = await usageOf(response.headers.get('atrium-request-id'));
      assert.equal(row.outcome, 'client_aborted');
      await eventually(async () => upstream.aborted > abortedBefore);
    });

    test('a client that leaves before the answer starts takes the upstream call with it; recorded as 499', async () => {
      const abortedBefore = upstream.aborted;
      const model = `fake-wait-${3000 + Math.floor(Math.random() * 1000)}`;
      await assert.rejects(
        openai(tenant.apiKey).chat.completions.create({ model, messages: [] }, { signal: AbortSignal.timeout(300) }),
        (error: unknown) => error instanceof OpenAI.APIUserAbortError,
      );
      await eventually(async () => upstream.aborted > abortedBefore);
      const row = await eventually(async () => rowsOf<UsageRow>(await service.ctx.db.execute(sql`select * from llm_usage where project_id = ${tenant.projectId}::uuid and model = ${model}`))[0]);
      assert.deepEqual([row.status, row.outcome, row.usage_source, row.ttfb_ms], [499, 'client_aborted', 'missing', null]);
    });
  });

  describe('Anthropic', () => {
    test('messages, plain and streamed (usage from message_start and the last message_delta), tool use, count_tokens, models', async () => {
      const client = anthropic({ apiKey: tenant.apiKey });
      const plain = await client.messages.create({ model: 'fake-claude', max_tokens: 16, messages: [{ role: 'user', content: 'Hi' }] }).withResponse();
      assert.deepEqual(plain.data.content, [{ type: 'text', text: 'Hello from the fake.' }]);
      const sent = lastUpstream();
      assert.equal(sent.headers['x-api-key'], ANTHROPIC_KEY);
      assert.ok(sent.headers['anthropic-version'], 'anthropic-version goes upstream');
      assert.equal(sent.headers.authorization, undefined, 'the caller\'s credential stays here');
      const row = await usageOf(plain.response.headers.get('atrium-request-id'));
      assert.deepEqual(tokens(row), ANTHROPIC_TOKENS);

      const stream = client.messages.stream({ model: 'fake-claude', max_tokens: 16, messages: [{ role: 'user', content: 'Hi' }] });
      const message = await stream.finalMessage();
      assert.equal(message.usage.output_tokens, FAKE_USAGE.output);
      const streamedRow = await usageOf((await stream.withResponse()).response.headers.get('atrium-request-id'));
      assert.deepEqual([streamedRow.stream, streamedRow.outcome], [true, 'completed']);
      assert.deepEqual(tokens(streamedRow), ANTHROPIC_TOKENS);

      const tool = await client.messages.stream({ model: 'fake-tools', max_tokens: 16, messages: [{ role: 'user', content: 'Weather?' }], tools: [{ name: 'weather', input_schema: { type: 'object' } }] }).finalMessage();
      assert.deepEqual(tool.content[0], { type: 'tool_use', id: 'toolu_1', name: 'weather', input: { city: 'Paris' } });
      assert.equal((await client.messages.countTokens({ model: 'fake-claude', messages: [{ role: 'user', content: 'Hi' }] })).input_tokens, FAKE_USAGE.input);
      const models = [];
      for await (const model of client.models.list()) models.push(model.id);
      assert.deepEqual(models, ['claude-fake']);
    });

    test('the key as x-api-key, mid-stream errors and errors in Anthropic\'s shape', async () => {
      const viaHeader = await call(service, 'POST', '/anthropic/v1/messages', { headers: { 'x-api-key': tenant.apiKey }, json: { model: 'fake-claude', max_tokens: 8, messages: [] } });
      assert.equal(viaHeader.status, 200);
      const midstream = anthropic({ apiKey: tenant.apiKey }).messages.stream({ model: 'fake-midstream', max_tokens: 8, messages: [] });
      await assert.rejects(midstream.finalMessage(), (error: unknown) => error instanceof Anthropic.APIError);
      await assert.rejects(anthropic({ apiKey: 'ma-not-a-key' }).messages.create({ model: 'fake-claude', max_tokens: 8, messages: [] }), Anthropic.AuthenticationError);
      const limited = await call(service, 'POST', '/anthropic/v1/messages', { token: tenant.apiKey, json: { model: 'fake-429', max_tokens: 8, messages: [] } });
      assert.equal(limited.status, 429);
      assert.equal(limited.headers.get('retry-after'), '7');
      assert.equal(limited.headers.get('anthropic-ratelimit-requests-remaining'), '0');
      const bad = await call(service, 'POST', '/anthropic/v1/messages', { token: tenant.apiKey, json: { max_tokens: 8 } });
      assert.deepEqual([bad.status, bad.body.type, bad.body.error.type], [400, 'error', 'invalid_request_error']);
    });
  });

  describe('credentials', () => {
    let llmClient: TestClient;
    let plainClient: TestClient;

    before(async () => {
      llmClient = await insertClient(service, tenant.projectId, { name: 'LLM app', scope: 'openid profile email llm:invoke' });
      plainClient = await insertClient(service, tenant.projectId, { name: 'Plain app', scope: 'openid profile email' });
    });

    async function accessToken(client: TestClient, who: { email: string; password: string }, scope: string): Promise<string> {
      const config = await discover(service, client);
      const request = await authorizationRequest(config, client.redirectUri, scope);
      const callback = await signInAndConsent(new FormBrowser(service.url), request, client.redirectUri, who.email, who.password);
      return (await oidc.authorizationCodeGrant(config, callback, { pkceCodeVerifier: request.verifier, expectedState: request.state, expectedNonce: request.nonce })).access_token;
    }

    test('OAuth: llm:invoke, the project header and an llm_proxy_user; each missing piece is refused in the provider\'s shape', async () => {
      const token = await accessToken(llmClient, tenant, 'openid llm:invoke');
      const withProject = { 'service-project-id': tenant.projectId };
      const { response } = await openai(token, withProject).chat.completions.create({ model: 'fake-chat', messages: [] }).withResponse();
      const row = await usageOf(response.headers.get('atrium-request-id'));
      assert.deepEqual([row.credential_kind, row.user_id, row.client_id], ['oauth', tenant.userId, llmClient.clientId]);
      // The MeshAgent SDKs' name for the header, and Anthropic's client.
      await openai(token, { 'meshagent-project-id': tenant.projectId }).models.list();
      await anthropic({ authToken: token, headers: withProject }).messages.create({ model: 'fake-claude', max_tokens: 8, messages: [] });

      await assert.rejects(openai(token).models.list(), (error: unknown) => {
        assert.ok(error instanceof OpenAI.AuthenticationError, String(error));
        assert.match((error as Error).message, /service-project-id/);
        return true;
      });
      await assert.rejects(anthropic({ authToken: token }).messages.create({ model: 'fake-claude', max_tokens: 8, messages: [] }), Anthropic.AuthenticationError);
      const other = await createTenant(service, 'llm-other');
      await assert.rejects(openai(token, { 'service-project-id': other.projectId }).models.list(), OpenAI.NotFoundError);

      const noScope = await accessToken(plainClient, tenant, 'openid');
      await assert.rejects(openai(noScope, withProject).models.list(), (error: unknown) => error instanceof OpenAI.PermissionDeniedError && /llm:invoke/.test((error as Error).message));

      const member = await createUserWithToken(service, 'llm-member');
      await call(service, 'POST', `/accounts/projects/${tenant.projectId}/users`, { token: tenant.apiKey, json: { user_id: member.userId, roles: ['member'] } });
      const memberToken = await accessToken(llmClient, { email: member.email, password: 'correct horse battery staple' }, 'openid llm:invoke');
      await assert.rejects(openai(memberToken, withProject).models.list(), (error: unknown) => error instanceof OpenAI.PermissionDeniedError && /llm_proxy_user/.test((error as Error).message));
      await call(service, 'POST', `/accounts/projects/${tenant.projectId}/users`, { token: tenant.apiKey, json: { user_id: member.userId, can_use_llm_proxy: true } });
      service.ctx.auth.forgetMembership(member.userId, tenant.projectId);
      assert.equal((await openai(memberToken, withProject).models.list()).data.length, 1, 'the legacy flag makes an LLM proxy user');
    });

    test('participant tokens: an api grant with llm, its model patterns; API keys without the role', async () => {
      const mint = async (grants: unknown[]) => (await call(service, 'POST', `/accounts/projects/${tenant.projectId}/participant-tokens`, { token: tenant.apiKey, json: { name: 'agent-7', grants } })).body.token as string;
      const allowed = await mint([{ name: 'api', scope: { llm: { models: ['openai/fake-*'] } } }]);
      const { response } = await openai(allowed).chat.completions.create({ model: 'fake-chat', messages: [] }).withResponse();
      const row = await usageOf(response.headers.get('atrium-request-id'));
      assert.deepEqual([row.credential_kind, row.participant], ['participant', 'agent-7']);
      await assert.rejects(openai(allowed).chat.completions.create({ model: 'gpt-other', messages: [] }), OpenAI.PermissionDeniedError);
      await assert.rejects(anthropic({ apiKey: allowed }).messages.create({ model: 'fake-claude', max_tokens: 8, messages: [] }), Anthropic.PermissionDeniedError);
      const noLlm = await mint([{ name: 'api', scope: { queues: {} } }]);
      await assert.rejects(openai(noLlm).models.list(), OpenAI.PermissionDeniedError);

      const narrow = await call(service, 'POST', `/accounts/projects/${tenant.projectId}/api-keys`, { token: tenant.apiKey, json: { name: 'rooms only', roles: ['room_creator'] } });
      await assert.rejects(openai(narrow.body.value).models.list(), OpenAI.PermissionDeniedError);
      await assert.rejects(openai('garbage').models.list(), OpenAI.AuthenticationError);
    });
  });

  test('usage records are idempotent by request id; calls finishing together share one statement, an event each', async () => {
    const { response } = await openai(tenant.apiKey).embeddings.create({ model: 'fake-embed', input: 'x' }).withResponse();
    const row = await usageOf(response.headers.get('atrium-request-id'));
    const record = (requestId: string, inputTokens: number) => ({
      projectId: tenant.projectId, request_id: requestId, provider: 'openai', endpoint: '/v1/embeddings', model: 'fake-embed', stream: false, status: 200,
      outcome: 'completed', usage_source: 'provider', requested_model: 'fake-embed', request_bytes: 0, max_output_tokens: null, choices: 1, usage: { input_tokens: inputTokens, cached_input_tokens: 0, cache_write_tokens: 0, output_tokens: 0, reasoning_tokens: 0 },
      latency_ms: 1, ttfb_ms: null, credential: { kind: 'api_key', id: 'replay' }, user: null, client: null, participant: null, upstream_request_id: null,
      annotations: { batch: 'yes' }, started_at: new Date().toISOString(),
    });
    // The same request id written again (a replay) changes nothing; the new ones beside it are written.
    const fresh = [randomUUID(), randomUUID()];
    const recorded = await recordCalls(service.ctx, tenant.projectId, [record(row.request_id, 999), record(fresh[0]!, 11), record(fresh[1]!, 12)]);
    assert.equal(recorded, 2);
    const rows = rowsOf<UsageRow>(await service.ctx.db.execute(sql`select * from llm_usage where request_id = ${row.request_id}::uuid`));
    assert.equal(rows.length, 1);
    assert.equal(Number(rows[0]!.input_tokens), FAKE_USAGE.input);
    for (const [i, id] of fresh.entries()) assert.equal(Number((await usageOf(id)).input_tokens), 11 + i);
    const events = rowsOf<{ data: { request_id: string; annotations: Record<string, string> } }>(await service.ctx.db.execute(sql`
      select data from events where type = 'llm.call.completed' and data->'annotations'->>'batch' = 'yes'`));
    assert.deepEqual(events.map((e) => e.data.request_id).sort(), [...fresh].sort(), 'an event for each new record, none for the replay');

    // Calls that finish together: every one recorded once, with its own event.
    const answers = await Promise.all(Array.from({ length: 20 }, () => openai(tenant.apiKey).embeddings.create({ model: 'fake-embed', input: 'y' }).withResponse()));
    const ids = answers.map((a) => a.response.headers.get('atrium-request-id')!);
    for (const id of ids) assert.equal((await usageOf(id)).request_id, id);
    await eventually(async () => rowsOf(await service.ctx.db.execute(sql`
      select 1 from events where type = 'llm.call.completed' and data->>'request_id' = any(${`{${ids.join(',')}}`}::text[])`)).length === 20);
  });

  test('without enforcement a model without a price is still served, recorded at no cost and flagged unpriced in the ledger and the usage report', async () => {
    const t = await createTenant(service, 'llm-unpriced');
    const { response } = await openai(t.apiKey).chat.completions.create({ model: 'fake-unpriced', messages: [{ role: 'user', content: 'Hi' }] }).withResponse();
    const requestId = response.headers.get('atrium-request-id');
    const debit = await eventually(async () => ((await call(service, 'GET', `/accounts/projects/${t.projectId}/transactions`, { token: t.apiKey })).body.transactions as any[]).find((e) => e.reference === requestId));
    assert.deepEqual([debit.amount, debit.description], [0, 'openai fake-unpriced: 8 input, 3 cached input, 5 output, 2 reasoning, 1 request (unpriced: no price for this model)']);
    const { body } = await call(service, 'GET', `/accounts/projects/${t.projectId}/usage?interval=day&report=model`, { token: t.apiKey });
    assert.deepEqual(body.unpriced, [{ provider: 'openai', model: 'fake-unpriced', requests: 1 }]);
    assert.equal(body.usage.find((r: any) => r.model === 'fake-unpriced' && r.requests === 1).unpriced_requests, 1);
    // Whole UTC days read the daily rollup: the same.
    const today = new Date().toISOString().slice(0, 10);
    const tomorrow = new Date(Date.parse(today) + 86_400_000).toISOString().slice(0, 10);
    const daily = await call(service, 'GET', `/accounts/projects/${t.projectId}/usage?start=${today}T00:00:00Z&end=${tomorrow}T00:00:00Z&report=model`, { token: t.apiKey });
    assert.deepEqual(daily.body.unpriced, [{ provider: 'openai', model: 'fake-unpriced', requests: 1 }]);
  });

  test('an upstream that sends no answer within ATRIUM_LLM_TIMEOUT_SECONDS: 504 in the provider\'s shape, the request given up, the call recorded', async () => {
    const patient = await startTestService(engine, { ATRIUM_OPENAI_BASE_URL: `${upstream.url}/v1`, ATRIUM_OPENAI_API_KEY: OPENAI_KEY, ATRIUM_LLM_TIMEOUT_SECONDS: '1' });
    try {
      const own = await createTenant(patient, 'llm-timeout');
      const abortedBefore = upstream.aborted;
      const client = new OpenAI({ apiKey: own.apiKey, baseURL: `${patient.url}/openai/v1`, maxRetries: 0 });
      // The fake model answers after 2.0–3.0 s.
      await assert.rejects(client.chat.completions.create({ model: 'fake-wait-2500', messages: [] }), (error: unknown) =>
        error instanceof OpenAI.APIError && error.status === 504 && (error.error as { code?: string }).code === 'upstream_timeout');
      await eventually(async () => upstream.aborted > abortedBefore);
      const row = await eventually(async () => rowsOf<UsageRow>(await patient.ctx.db.execute(sql`select * from llm_usage where project_id = ${own.projectId}::uuid`))[0]);
      assert.deepEqual([row.status, row.outcome, row.usage_source], [504, 'upstream_error', 'missing']);
    } finally {
      await patient.stop();
    }
  });

  test('records still waiting to be written together when the service stops are written on its way down', async () => {
    // A linger longer than the test: only the flush on the way down can write them.
    const stopping = await startTestService(engine, { ATRIUM_OPENAI_BASE_URL: `${upstream.url}/v1`, ATRIUM_OPENAI_API_KEY: OPENAI_KEY, ATRIUM_LLM_RECORD_LINGER_MS: '10000' });
    try {
      const own = await createTenant(stopping, 'llm-stop');
      const client = new OpenAI({ apiKey: own.apiKey, baseURL: `${stopping.url}/openai/v1`, maxRetries: 0 });
      const answers = await Promise.all([1, 2, 3].map(() => client.embeddings.create({ model: 'fake-embed', input: 'z' }).withResponse()));
      const ids = answers.map((a) => a.response.headers.get('atrium-request-id')!);
      // At once, while the records linger: closing the app (not yet the database) writes them.
      await stopping.app.close();
      const rows = rowsOf<{ request_id: string }>(await stopping.ctx.db.execute(sql`select request_id from llm_usage where request_id = any(${`{${ids.join(',')}}`}::uuid[])`));
      assert.deepEqual(rows.map((r) => r.request_id).sort(), [...ids].sort());
    } finally {
      await stopping.stop();
    }
  });
});

describe('LLM proxy without upstream keys [pglite]', () => {
  let service: TestService;
  before(async () => {
    service = await startTestService('pglite');
  });
  after(() => service?.stop());

  test('a provider the operator did not configure answers 404 in its own shape', async () => {
    const tenant = await createTenant(service, 'llm-none');
    const openaiAnswer = await call(service, 'POST', '/openai/v1/chat/completions', { token: tenant.apiKey, json: { model: 'gpt-x', messages: [] } });
    assert.equal(openaiAnswer.status, 404);
    assert.equal(openaiAnswer.body.error.code, 'llm_provider_unavailable');
    assert.equal(openaiAnswer.body.error.type, 'invalid_request_error');
    const anthropicAnswer = await call(service, 'GET', '/anthropic/v1/models', { token: tenant.apiKey });
    assert.deepEqual([anthropicAnswer.status, anthropicAnswer.body.type, anthropicAnswer.body.error.type], [404, 'error', 'not_found_error']);
    assert.match(anthropicAnswer.body.error.message, /Anthropic/);
  });
});
