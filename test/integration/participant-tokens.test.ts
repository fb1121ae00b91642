// Participant tokens: minted by Atrium (ES256, verifiable offline against the JWKS) or by an
// application with the official SDK from one of our API keys (HS256); validated by
// /api/participant-token/validate.
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { after, before, test } from 'node:test';
import { createRemoteJWKSet, decodeJwt, decodeProtectedHeader, generateKeyPair, jwtVerify, SignJWT } from 'jose';
import { call, createTenant, createUserWithToken, forEachEngine, startTestService, type Tenant, type TestService } from '../support/service.ts';

interface SdkGrant { name: string; scope: unknown }
const sdk = createRequire(import.meta.url)('@meshagent/meshagent') as {
  ParticipantToken: new (init: { name: string; grants?: unknown[] }) => {
    addRoomGrant(room: string): void;
    addRoleGrant(role: string): void;
    addApiGrant(scope: unknown): void;
    toJwt(options: { apiKey?: string; token?: string; expiration?: Date }): Promise<string>;
  };
  ApiScope: { full(): unknown; agentDefault(): unknown };
  parseApiKey(key: string): { id: string; projectId: string; secret: string };
};

forEachEngine('participant tokens', (engine) => {
  let service: TestService;
  let tenant: Tenant;
  before(async () => {
    service = await startTestService(engine);
    tenant = await createTenant(service, 'tokens');
  });
  after(() => service?.stop());

  const mint = (json: unknown, token = tenant.apiKey, t = tenant) => call(service, 'POST', `/accounts/projects/${t.projectId}/participant-tokens`, { token, json });
  const validate = (token: string) => call(service, 'POST', '/api/participant-token/validate', { json: { token } });
  const sdkToken = async (apiKey: string, options: { expiration?: Date } = {}) => {
    const token = new sdk.ParticipantToken({ name: 'app-user' });
    token.addRoomGrant('lobby');
    token.addRoleGrant('user');
    token.addApiGrant(sdk.ApiScope.agentDefault());
    return token.toJwt({ apiKey, ...options });
  };

  test('docs/end-users.md\'s example mints a token for its one room', async () => {
    const doc = readFileSync(new URL('../../docs/end-users.md', import.meta.url), 'utf8');
    const body = /participant-tokens" \\\n[^\n]*\n\s*-d '([\s\S]*?)'\n/.exec(doc)?.[1];
    assert.ok(body, 'the example\'s request body');
    const minted = await mint(JSON.parse(body));
    assert.equal(minted.status, 200, JSON.stringify(minted.body));
    const claims = decodeJwt(minted.body.token as string) as { grants: SdkGrant[] };
    assert.deepEqual(claims.grants.find((g) => g.name === 'room'), { name: 'room', scope: 'lobby' });
    assert.equal((await validate(minted.body.token as string)).status, 200);
  });

  test('minted tokens carry the SDK claims and verify offline against the JWKS', async () => {
    const grants = [{ name: 'room', scope: 'lobby' }, { name: 'role', scope: 'agent' }, { name: 'api', scope: { messaging: {}, storage: { paths: [{ path: '/a', read_only: true }] } } }];
    const minted = await mint({ name: 'robot', grants });
    assert.equal(minted.status, 200);
    assert.deepEqual(Object.keys(minted.body), ['token']);
    const token = minted.body.token as string;

    const header = decodeProtectedHeader(token);
    const jwks = createRemoteJWKSet(new URL(`${service.url}/.well-known/jwks.json`));
    const { payload } = await jwtVerify(token, jwks, { issuer: service.url, subject: tenant.projectId });
    assert.equal(payload.name, 'robot');
    assert.deepEqual(payload.grants, grants);
    assert.equal(payload.sub, tenant.projectId);
    assert.equal(payload.kid, header.kid);
    assert.equal(typeof payload.version, 'string');
    assert.ok(payload.exp! - payload.iat! <= 3600 && payload.exp! - payload.iat! > 3500);

    const keys = await call(service, 'GET', '/.well-known/jwks.json');
    assert.equal(keys.status, 200);
    assert.ok(keys.body.keys.some((k: { kid: string }) => k.kid === header.kid));
    for (const key of keys.body.keys) assert.equal(key.d, undefined, 'no private parts are published');

    const validated = await validate(token);
    assert.equal(validated.status, 200);
    assert.equal(validated.body.name, 'robot');
    assert.deepEqual(validated.body.grants, grants);
    assert.equal(validated.body.sub, tenant.projectId);

    const short = await mint({ name: 'brief', expires_in_seconds: 60 });
    const claims = decodeJwt(short.body.token);
    assert.equal(claims.exp! - claims.iat!, 60);
    assert.deepEqual(claims.grants, []);
  });

  test('developers and admins mint; members may not; other projects are 404', async () => {
    const member = await createUserWithToken(service, 'pt-member');
    const dev = await createUserWithToken(service, 'pt-dev');
    await call(service, 'POST', `/accounts/projects/${tenant.projectId}/users`, { token: tenant.apiKey, json: { user_id: member.userId } });
    await call(service, 'POST', `/accounts/projects/${tenant.projectId}/users`, { token: tenant.apiKey, json: { user_id: dev.userId, roles: ['developer'] } });
    assert.equal((await mint({ name: 'x' }, member.token)).status, 403);
    assert.equal((await mint({ name: 'x' }, dev.token)).status, 200);
    assert.equal((await mint({ name: 'x' }, tenant.userToken)).status, 200);
    const other = await createTenant(service, 'pt-other');
    assert.equal((await mint({ name: 'x' }, other.apiKey)).status, 404);
  });

  test('validate accepts a token an application minted with the SDK from one of our API keys', async () => {
    const token = await sdkToken(tenant.apiKey);
    const header = decodeProtectedHeader(token);
    assert.equal(header.alg, 'HS256');
    const validated = await validate(token);
    assert.equal(validated.status, 200, JSON.stringify(validated.body));
    assert.equal(validated.body.name, 'app-user');
    assert.equal(validated.body.sub, tenant.projectId);
    assert.equal(validated.body.kid, sdk.parseApiKey(tenant.apiKey).id);
    assert.deepEqual(validated.body.grants.find((g: SdkGrant) => g.name === 'room'), { name: 'room', scope: 'lobby' });

    // With a narrowed key too: the key's secret signs, whatever its roles.
    const narrow = await call(service, 'POST', `/accounts/projects/${tenant.projectId}/api-keys`, { token: tenant.apiKey, json: { name: 'narrow', roles: ['member'] } });
    assert.equal((await validate(await sdkToken(narrow.body.value))).status, 200);
  });

  test('tampered, expired, unknown-key and revoked-key tokens are 401', async () => {
    const expectInvalid = async (token: string, why: string) => {
      const r = await validate(token);
      assert.equal(r.status, 401, `${why}: ${JSON.stringify(r.body)}`);
      assert.equal(typeof r.body.error.code, 'string');
      assert.equal(typeof r.body.error.message, 'string');
    };
    const ours = (await mint({ name: 'victim', grants: [{ name: 'room', scope: 'lobby' }] })).body.token as string;
    const [h, p, s] = ours.split('.') as [string, string, string];
    const forgedPayload = Buffer.from(JSON.stringify({ ...decodeJwt(ours), grants: [{ name: 'room', scope: 'vault' }] })).toString('base64url');
    await expectInvalid(`${h}.${forgedPayload}.${s}`, 'tampered payload');
    await expectInvalid(`${h}.${p}.${s.slice(0, -4)}AAAA`, 'tampered signature');
    await expectInvalid(`${h}.${p}.`, 'signature stripped');
    const none = `${Buffer.from(JSON.stringify({ alg: 'none', typ: 'JWT' })).toString('base64url')}.${p}.`;
    await expectInvalid(none, 'alg none');
    await expectInvalid('not.a.jwt', 'garbage');
    await expectInvalid('x', 'garbage');

    // Expired: ours (signed with the service key, but in the past) and the SDK's.
    const key = service.ctx.keys.current;
    const past = Math.floor(Date.now() / 1000) - 3600;
    const expiredOurs = await new SignJWT({ name: 'late', grants: [], kid: key.kid, version: '0.39.9' })
      .setProtectedHeader({ alg: key.alg, kid: key.kid }).setSubject(tenant.projectId).setIssuer(service.url)
      .setIssuedAt(past - 60).setExpirationTime(past).sign(key.privateKey);
    await expectInvalid(expiredOurs, 'expired (ours)');
    await expectInvalid(await sdkToken(tenant.apiKey, { expiration: new Date(Date.now() - 60_000) }), 'expired (SDK)');

    // Unknown keys: an asymmetric key we never published, and an API key id we never issued.
    const stranger = await generateKeyPair('ES256');
    const unknownKid = await new SignJWT({ name: 'x', grants: [] }).setProtectedHeader({ alg: 'ES256', kid: randomUUID() })
      .setSubject(tenant.projectId).setIssuer(service.url).setExpirationTime('1h').sign(stranger.privateKey);
    await expectInvalid(unknownKid, 'unknown signing key');
    const wrongKey = await new SignJWT({ name: 'x', grants: [] }).setProtectedHeader({ alg: 'ES256', kid: key.kid })
      .setSubject(tenant.projectId).setIssuer(service.url).setExpirationTime('1h').sign(stranger.privateKey);
    await expectInvalid(wrongKey, 'our kid, another key');
    const parsed = sdk.parseApiKey(tenant.apiKey);
    const secret = new TextEncoder().encode(parsed.secret);
    const ghostKid = await new SignJWT({ name: 'x', grants: [], kid: randomUUID(), sub: tenant.projectId }).setProtectedHeader({ alg: 'HS256' }).sign(secret);
    await expectInvalid(ghostKid, 'unknown API key id');
    const noKid = await new SignJWT({ name: 'x', grants: [], sub: tenant.projectId }).setProtectedHeader({ alg: 'HS256' }).sign(secret);
    await expectInvalid(noKid, 'no kid');
    const badKid = await new SignJWT({ name: 'x', grants: [], kid: 'nope', sub: tenant.projectId }).setProtectedHeader({ alg: 'HS256' }).sign(secret);
    await expectInvalid(badKid, 'malformed kid');
    const other = await createTenant(service, 'pt-cross');
    const crossProject = await new SignJWT({ name: 'x', grants: [], kid: parsed.id, sub: other.projectId }).setProtectedHeader({ alg: 'HS256' }).sign(secret);
    await expectInvalid(crossProject, 'sub of another project');
    const wrongSecret = await new SignJWT({ name: 'x', grants: [], kid: parsed.id, sub: tenant.projectId }).setProtectedHeader({ alg: 'HS256' }).sign(new TextEncoder().encode('not-the-secret-at-all'));
    await expectInvalid(wrongSecret, 'wrong secret');
    const notParticipant = await new SignJWT({ kid: parsed.id, sub: tenant.projectId }).setProtectedHeader({ alg: 'HS256' }).sign(secret);
    await expectInvalid(notParticipant, 'no name or grants');

    // Revoked: a token minted with a key that is then deleted.
    const doomed = await call(service, 'POST', `/accounts/projects/${tenant.projectId}/api-keys`, { token: tenant.apiKey, json: { name: 'doomed' } });
    const beforeRevoke = await sdkToken(doomed.body.value);
    assert.equal((await validate(beforeRevoke)).status, 200);
    await call(service, 'DELETE', `/accounts/projects/${tenant.projectId}/api-keys/${doomed.body.id}`, { token: tenant.apiKey });
    await expectInvalid(beforeRevoke, 'revoked key');
  });

  test('bad input is a 4xx naming the problem', async () => {
    const cases: [unknown, RegExp][] = [
      ['{"name"', /JSON/i],
      ['[]', /object/],
      [{}, /name is required/],
      [{ name: '' }, /name/],
      [{ name: 3 }, /name/],
      [{ name: 'x'.repeat(201) }, /name/],
      [{ name: 'x', grants: {} }, /grants/],
      [{ name: 'x', grants: [{ scope: 'lobby' }] }, /name/],
      [{ name: 'x', grants: Array.from({ length: 51 }, () => ({ name: 'room', scope: 'r' })) }, /grants/],
      [{ name: 'x', expires_in_seconds: 1 }, /expires_in_seconds/],
      [{ name: 'x', expires_in_seconds: 'soon' }, /expires_in_seconds/],
    ];
    for (const [json, message] of cases) {
      const r = await mint(json);
      assert.equal(r.status, 400, JSON.stringify(json).slice(0, 80));
      assert.match(r.body.error.message, message, JSON.stringify(json).slice(0, 80));
    }
    for (const json of ['{', '[]', {}, { token: '' }, { token: 5 }, { token: 'x'.repeat(16_385) }]) {
      const r = await call(service, 'POST', '/api/participant-token/validate', { json });
      assert.equal(r.status, 400, JSON.stringify(json).slice(0, 80));
      assert.equal(typeof r.body.error.message, 'string');
    }
  });
});
