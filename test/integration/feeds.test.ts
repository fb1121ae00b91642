// Feeds and subscriptions on both engines, driven by the official SDK where it has the method:
// CRUD and visibility, message schemas (compiled once per version; refusals name the index and the
// path), all-or-nothing batches, who may publish (roles, API keys, participant tokens), and delivery
// into room storage — JSON Lines files per window or per N messages, held while the feed is
// paused, stopped by deleting the subscription — with storage.file.updated for each file.
import assert from 'node:assert/strict';
import { createRequire } from 'node:module';
import { after, before, describe, test } from 'node:test';
import type * as Sdk from '@meshagent/meshagent';
import { call, createTenant, createUserWithToken, forEachEngine, startTestService, type Tenant, type TestService } from '../support/service.ts';
import { allLines, filesUnder } from '../support/storage.ts';
import { eventually, startReceiver, type Receiver } from '../support/webhooks.ts';

const require = createRequire(import.meta.url);
const { Meshagent, ParticipantToken, ParticipantGrant, RoomException } = require('@meshagent/meshagent') as typeof Sdk;

async function rejectsWithStatus(promise: Promise<unknown>, status: number): Promise<void> {
  await assert.rejects(promise, (error: unknown) => {
    assert.ok(error instanceof RoomException, String(error));
    assert.match((error as Error).message, new RegExp(`Status code: ${status}\\b`));
    return true;
  });
}

forEachEngine('feeds', (engine) => {
  let service: TestService;
  let tenant: Tenant;
  let sdk: InstanceType<typeof Meshagent>;
  let receiver: Receiver;
  const project = () => `/accounts/projects/${tenant.projectId}`;

  before(async () => {
    receiver = await startReceiver();
    // A file per second, or per 5 messages; webhooks to the receiver on loopback.
    // Its own database: the flush settings apply to the jobs of this service's publishes only if no
    // other test file's worker runs them.
    service = await startTestService(engine, { ATRIUM_FEEDS_FLUSH_SECONDS: '1', ATRIUM_FEEDS_FLUSH_MESSAGES: '5', ATRIUM_WEBHOOKS_ALLOW_PRIVATE: 'true' });
    tenant = await createTenant(service, 'feeds');
    sdk = new Meshagent({ baseUrl: service.url, token: tenant.apiKey });
  });
  after(async () => {
    await service?.stop();
    await receiver?.close();
  });

  const newRoom = async (name: string) => (await call(service, 'POST', `${project()}/rooms`, { token: tenant.apiKey, json: { name } })).body as { id: string; name: string };

  describe('feeds', () => {
    test('the SDK creates, reads, lists, updates and deletes feeds; visibility is fixed at creation', async () => {
      const feed = await sdk.createFeed({ projectId: tenant.projectId, name: 'orders', description: 'Order events', visibility: 'project', annotations: { team: 'ops' }, messageSchema: { type: 'object' } });
      assert.equal(feed.name, 'orders');
      assert.equal(feed.visibility, 'project');
      assert.deepEqual(feed.messageSchema, { type: 'object' });
      assert.deepEqual(feed.annotations, { team: 'ops' });
      assert.equal(feed.paused, false);
      assert.equal((await sdk.getFeed(tenant.projectId, feed.id)).description, 'Order events');
      await rejectsWithStatus(sdk.createFeed({ projectId: tenant.projectId, name: 'orders' }), 409);

      await sdk.updateFeed({ projectId: tenant.projectId, feedId: feed.id, name: 'orders-v2', description: 'v2', paused: true, annotations: {}, messageSchema: null });
      const updated = await sdk.getFeed(tenant.projectId, feed.id);
      assert.deepEqual([updated.name, updated.description, updated.paused, updated.visibility, updated.messageSchema], ['orders-v2', 'v2', true, 'project', null]);
      const direct = await call(service, 'PUT', `${project()}/feeds/${feed.id}`, { token: tenant.apiKey, json: { visibility: 'public' } });
      assert.equal(direct.status, 200);
      assert.equal(direct.body.feed.visibility, 'project', 'visibility is not an input of update');

      const page = await sdk.listFeedsPage(tenant.projectId, { filter: 'orders-v' });
      assert.deepEqual(page.feeds.map((f) => f.id), [feed.id]);
      assert.equal(page.total, 1);
      await sdk.deleteFeed(tenant.projectId, feed.id);
      await rejectsWithStatus(sdk.getFeed(tenant.projectId, feed.id), 404);
      await rejectsWithStatus(sdk.deleteFeed(tenant.projectId, feed.id), 404);
    });

    test('private feeds are seen only with feed_inventory; a room sees project and public feeds and those subscribed into it', async () => {
      const room = await newRoom('visibility-room');
      const priv = await sdk.createFeed({ projectId: tenant.projectId, name: 'vis-private' });
      const proj = await sdk.createFeed({ projectId: tenant.projectId, name: 'vis-project', visibility: 'project' });
      const pub = await sdk.createFeed({ projectId: tenant.projectId, name: 'vis-public', visibility: 'public' });
      const other = await sdk.createFeed({ projectId: tenant.projectId, name: 'vis-private-subscribed' });
      await sdk.createFeedSubscription({ projectId: tenant.projectId, feedId: other.id, room: room.name, path: 'in' });

      const member = await createUserWithToken(service, 'feeds-member');
      await call(service, 'POST', `${project()}/users`, { token: tenant.apiKey, json: { user_id: member.userId, roles: ['member'] } });
      const asMember = new Meshagent({ baseUrl: service.url, token: member.token });
      const names = (feeds: { name: string }[]) => feeds.map((f) => f.name).filter((n) => n.startsWith('vis-')).sort();
      assert.deepEqual(names(await asMember.listFeeds(tenant.projectId)), ['vis-project', 'vis-public']);
      assert.deepEqual(names(await sdk.listFeeds(tenant.projectId)), ['vis-private', 'vis-private-subscribed', 'vis-project', 'vis-public']);
      await rejectsWithStatus(asMember.getFeed(tenant.projectId, priv.id), 404);
      assert.equal((await asMember.getFeed(tenant.projectId, proj.id)).id, proj.id);
      assert.deepEqual(names(await sdk.listRoomFeeds(tenant.projectId, room.name)), ['vis-private-subscribed', 'vis-project', 'vis-public']);
      assert.deepEqual(names(await asMember.listRoomFeeds(tenant.projectId, room.name)), ['vis-project', 'vis-public']);
      await rejectsWithStatus(sdk.listRoomFeeds(tenant.projectId, 'no-such-room'), 404);
      // A member may not create feeds or publish.
      await rejectsWithStatus(asMember.createFeed({ projectId: tenant.projectId, name: 'nope' }), 403);
      await rejectsWithStatus(asMember.publishFeedMessage({ projectId: tenant.projectId, feedId: pub.id, message: { x: 1 } }), 403);
    });
  });

  describe('messages', () => {
    test('a message schema is checked at create and update, and every message is validated against it', async () => {
      const bad = await call(service, 'POST', `${project()}/feeds`, { token: tenant.apiKey, json: { name: 'bad-schema', message_schema: { type: 'no-such-type' } } });
      assert.equal(bad.status, 400);
      assert.match(bad.body.error.message, /message_schema/);
      const feed = await sdk.createFeed({
        projectId: tenant.projectId, name: 'typed', visibility: 'project',
        messageSchema: { type: 'object', required: ['id'], properties: { id: { type: 'integer' }, amount: { type: 'number', minimum: 0 } } },
      });
      await sdk.publishFeedMessage({ projectId: tenant.projectId, feedId: feed.id, message: { id: 1, amount: 3 } });
      const one = await call(service, 'POST', `${project()}/feeds/${feed.id}/messages`, { token: tenant.apiKey, json: { id: 2, amount: -1 } });
      assert.equal(one.status, 400);
      assert.match(one.body.error.message, /the message .*\/amount/);
      const batch = await call(service, 'POST', `${project()}/feeds/${feed.id}/messages/batch`, { token: tenant.apiKey, json: [{ id: 3 }, { id: 4 }, { id: 'five' }] });
      assert.equal(batch.status, 400);
      assert.match(batch.body.error.message, /messages\[2\] .*\/id/);
      const accepted = await call(service, 'POST', `${project()}/feeds/${feed.id}/messages/batch`, { token: tenant.apiKey, json: [{ id: 3 }, { id: 4 }] });
      assert.equal(accepted.status, 201);
      // The refused batch took no seq: seqs stay gap-free.
      assert.deepEqual(accepted.body.messages.map((m: { seq: number }) => m.seq), [2, 3]);
      assert.ok(accepted.body.messages.every((m: { id: string; created_at: string }) => m.id && m.created_at));

      // A new schema applies from the next publish.
      await sdk.updateFeed({ projectId: tenant.projectId, feedId: feed.id, name: 'typed', messageSchema: { type: 'string' } });
      assert.equal((await call(service, 'POST', `${project()}/feeds/${feed.id}/messages`, { token: tenant.apiKey, json: { id: 5 } })).status, 400);
      assert.equal((await call(service, 'POST', `${project()}/feeds/${feed.id}/messages`, { token: tenant.apiKey, json: '"text"' })).status, 201);
      const unusable = await call(service, 'PUT', `${project()}/feeds/${feed.id}`, { token: tenant.apiKey, json: { message_schema: { $ref: 'https://example.com/remote.json' } } });
      assert.equal(unusable.status, 400);
    });

    test('a paused feed refuses publishes and subscription changes with 409; a missing feed is 404', async () => {
      const feed = await sdk.createFeed({ projectId: tenant.projectId, name: 'pausable', paused: true });
      await rejectsWithStatus(sdk.publishFeedMessage({ projectId: tenant.projectId, feedId: feed.id, message: 1 }), 409);
      await rejectsWithStatus(sdk.publishFeedBatch({ projectId: tenant.projectId, feedId: feed.id, messages: [1, 2] }), 409);
      await newRoom('paused-room');
      await rejectsWithStatus(sdk.createFeedSubscription({ projectId: tenant.projectId, feedId: feed.id, room: 'paused-room', path: 'x' }), 409);
      await rejectsWithStatus(sdk.publishFeedMessage({ projectId: tenant.projectId, feedId: crypto.randomUUID(), message: 1 }), 404);
    });

    test('who may publish: feed_manager, API keys holding it, participant tokens granted the feed', async () => {
      const feed = await sdk.createFeed({ projectId: tenant.projectId, name: 'guarded', visibility: 'project' });
      const publishWith = (token: string, body: unknown = { n: 1 }) => call(service, 'POST', `${project()}/feeds/${feed.id}/messages`, { token, json: body });
      assert.equal((await publishWith(tenant.userToken)).status, 201, 'an admin');
      const narrow = await call(service, 'POST', `${project()}/api-keys`, { token: tenant.apiKey, json: { name: 'narrow', roles: ['room_creator'] } });
      assert.equal((await publishWith(narrow.body.value)).status, 403, 'a key without feed_manager');
      const publisher = await call(service, 'POST', `${project()}/api-keys`, { token: tenant.apiKey, json: { name: 'publisher', roles: ['feed_manager'] } });
      assert.equal((await publishWith(publisher.body.value)).status, 201);

      // Tokens Atrium mints and tokens an application signs with its API key (the SDK's way).
      const minted = async (grants: unknown[]) => (await call(service, 'POST', `${project()}/participant-tokens`, { token: tenant.apiKey, json: { name: 'agent-1', grants } })).body.token as string;
      assert.equal((await publishWith(await minted([{ name: 'feed', scope: feed.id }]))).status, 201);
      assert.equal((await publishWith(await minted([{ name: 'feed', scope: 'guarded' }]))).status, 201, 'granted by name');
      assert.equal((await publishWith(await minted([{ name: 'feed', scope: 'another-feed' }]))).status, 403);
      assert.equal((await publishWith(await minted([{ name: 'room', scope: 'lobby' }]))).status, 403);
      const signed = new ParticipantToken({ name: 'app-agent', grants: [new ParticipantGrant({ name: 'feed', scope: '*' })] });
      const jwt = await signed.toJwt({ apiKey: tenant.apiKey });
      assert.equal((await publishWith(jwt)).status, 201);
      // A participant token is no credential for managing feeds.
      assert.equal((await call(service, 'GET', `${project()}/feeds/${feed.id}`, { token: jwt })).status, 403);
      // Another project's key is stopped at the project.
      const other = await createTenant(service, 'feeds-other');
      assert.equal((await publishWith(other.apiKey)).status, 404);
    });
  });

  describe('subscriptions', () => {
    test('the SDK manages subscriptions; a room that does not exist or a path that escapes is refused', async () => {
      const room = await newRoom('subs-room');
      const feed = await sdk.createFeed({ projectId: tenant.projectId, name: 'subs', visibility: 'project' });
      const sub = await sdk.createFeedSubscription({ projectId: tenant.projectId, feedId: feed.id, room: room.name, path: 'feeds/subs/', annotations: { a: 'b' } });
      assert.deepEqual([sub.feedId, sub.projectId, sub.room, sub.roomId, sub.path], [feed.id, tenant.projectId, room.name, room.id, 'feeds/subs']);
      await sdk.updateFeedSubscription({ projectId: tenant.projectId, feedId: feed.id, subscriptionId: sub.id, annotations: { c: 'd' } });
      assert.deepEqual((await sdk.getFeedSubscription(tenant.projectId, feed.id, sub.id)).annotations, { c: 'd' });
      const formatted = await call(service, 'PUT', `${project()}/feeds/${feed.id}/subscriptions/${sub.id}`, { token: tenant.apiKey, json: { filename_datetime_format: 'YYYY/MM/DD/hh_mm_ssZ' } });
      assert.equal(formatted.body.subscription.filename_datetime_format, 'YYYY/MM/DD/hh_mm_ssZ');
      assert.deepEqual(formatted.body.subscription.annotations, { c: 'd' }, 'fields left out keep their value');
      assert.deepEqual((await sdk.listFeedSubscriptions(tenant.projectId, feed.id)).map((s) => s.id), [sub.id]);

      const refused = async (body: unknown) => (await call(service, 'POST', `${project()}/feeds/${feed.id}/subscriptions`, { token: tenant.apiKey, json: body })).status;
      assert.equal(await refused({ room: 'no-such-room', path: 'x' }), 400);
      assert.equal(await refused({ room: room.name, path: '../other-room' }), 400);
      assert.equal(await refused({ room: room.name, path: 'x', filename_datetime_format: 'YYYY:MM' }), 400);
      assert.equal(await refused({ room: room.name, path: 'x', filename_datetime_format: '/YYYY' }), 400);
      await sdk.deleteFeedSubscription(tenant.projectId, feed.id, sub.id);
      await rejectsWithStatus(sdk.getFeedSubscription(tenant.projectId, feed.id, sub.id), 404);
    });

    test('a subscription writes only into a room whose files its creator may read; refused, nothing is added', async () => {
      const feed = await sdk.createFeed({ projectId: tenant.projectId, name: 'into-rooms', visibility: 'project' });
      // A member holding the project role to subscribe, and no access of their own to a room's files.
      const member = await createUserWithToken(service, 'feeds-subscriber');
      await call(service, 'POST', `${project()}/users`, { token: tenant.apiKey, json: { user_id: member.userId, roles: ['feed_subscription_creator'] } });
      const room = async (name: string, permissions?: unknown) => (await call(service, 'POST', `${project()}/rooms`, { token: tenant.apiKey, json: { name, permissions } })).body as { id: string; name: string };
      const theirs = await room('subs-theirs');
      const named = await room('subs-named', { [member.userId]: { storage: {} } });
      const subscribe = (token: string, name: string) => call(service, 'POST', `${project()}/feeds/${feed.id}/subscriptions`, { token, json: { room: name, path: 'in/' } });
      const count = async () => (await sdk.listFeedSubscriptions(tenant.projectId, feed.id)).length;

      const refused = await subscribe(member.token, theirs.name);
      assert.equal(refused.status, 403, JSON.stringify(refused.body));
      assert.match(refused.body.error.message, /developer project role/, 'the refusal names what would allow it');
      assert.equal(await count(), 0, 'the refused subscription was not added');
      // The room's initial permissions giving them its storage, or a role on its policy, let it through.
      assert.equal((await subscribe(member.token, named.name)).status, 201);
      const grant = await call(service, 'POST', `${project()}/policies/resources/room/${theirs.id}`, { token: tenant.apiKey, json: { subject: { type: 'user', id: member.userId }, roles: ['viewer'] } });
      assert.equal(grant.status, 200, JSON.stringify(grant.body));
      assert.equal((await subscribe(member.token, theirs.name)).status, 201);
      // A role that finds the room without its files does not.
      const listed = await room('subs-listed');
      await call(service, 'POST', `${project()}/policies/resources/room/${listed.id}`, { token: tenant.apiKey, json: { subject: { type: 'user', id: member.userId }, roles: ['list'] } });
      assert.equal((await subscribe(member.token, listed.name)).status, 403);
      assert.equal(await count(), 2);
    });

    test('messages land in the room\'s storage as JSON Lines: a file per window or per N messages, each announced once', async () => {
      const room = await newRoom('delivery-room');
      const feed = await sdk.createFeed({ projectId: tenant.projectId, name: 'delivery', visibility: 'project' });
      const hook = await call(service, 'POST', `${project()}/webhooks`, { token: tenant.apiKey, json: { name: 'files', url: `${receiver.url}/files`, events: ['storage.file.updated'] } });
      assert.equal(hook.status, 201);
      await sdk.createFeedSubscription({ projectId: tenant.projectId, feedId: feed.id, room: room.name, path: 'feeds/delivery' });
      const messages = Array.from({ length: 12 }, (_v, i) => ({ n: i, text: `message ${i}` }));
      await sdk.publishFeedBatch({ projectId: tenant.projectId, feedId: feed.id, messages });
      await sdk.publishFeedMessage({ projectId: tenant.projectId, feedId: feed.id, message: 'a string' });
      const folder = `rooms/${room.name}/feeds/delivery`;
      const files = await eventually(async () => {
        const found = await filesUnder(service, tenant, folder);
        return allLines(found).length >= 13 && found;
      });
      assert.deepEqual(allLines(files).map((l) => JSON.parse(l)), [...messages, 'a string'], 'every message once, in order, as published');
      const sizes = [...files.values()].map((lines) => lines.length);
      assert.ok(sizes.every((n) => n <= 5), `at most N lines per file (${sizes})`);
      assert.ok(sizes.slice(0, 2).every((n) => n === 5), `a full file as soon as N wait (${sizes})`);
      assert.ok([...files.keys()].every((p) => /\/\d{4}-\d\d-\d\dT\d\d_\d\d_\d\dZ_[0-9a-f]{8}_\d{12}\.jsonl$/.test(p)), [...files.keys()].join(', '));
      // One storage.file.updated per file, named by its project storage path.
      const ours = () => receiver.received.filter((r) => r.url === '/files' && String(r.json?.data?.path).startsWith(folder));
      await receiver.waitFor(() => ours().length >= files.size);
      assert.deepEqual(ours().map((r) => r.json.data.path).sort(), [...files.keys()]);
      assert.ok(ours().every((r) => r.json.event === 'storage.file.updated' && r.json.data.participant_id.startsWith('feed_subscription:')));
    });

    test('folders from filename_datetime_format; a paused feed holds its messages and delivers them after resume', async () => {
      const room = await newRoom('paused-delivery');
      const feed = await sdk.createFeed({ projectId: tenant.projectId, name: 'pause-delivery', visibility: 'project' });
      await call(service, 'POST', `${project()}/feeds/${feed.id}/subscriptions`, { token: tenant.apiKey, json: { room: room.name, path: '/', filename_datetime_format: 'YYYY/MM/DD/hh_mm_ss.SSS' } });
      await sdk.publishFeedBatch({ projectId: tenant.projectId, feedId: feed.id, messages: [1, 2] });
      await sdk.updateFeed({ projectId: tenant.projectId, feedId: feed.id, name: 'pause-delivery', paused: true });
      // Past the window: nothing written while paused.
      await new Promise((resolve) => setTimeout(resolve, 1800));
      assert.equal(allLines(await filesUnder(service, tenant, `rooms/${room.name}`)).length, 0);
      await sdk.updateFeed({ projectId: tenant.projectId, feedId: feed.id, name: 'pause-delivery', paused: false });
      const files = await eventually(async () => {
        const found = await filesUnder(service, tenant, `rooms/${room.name}`);
        return allLines(found).length >= 2 && found;
      });
      assert.deepEqual(allLines(files), ['1', '2']);
      const [path] = [...files.keys()];
      const now = new Date();
      assert.ok(path!.startsWith(`rooms/${room.name}/${now.getUTCFullYear()}/`), path);
      assert.match(path!, /\/\d{4}\/\d\d\/\d\d\/\d\d_\d\d_\d\d\.\d{3}_[0-9a-f]{8}_000000000001\.jsonl$/);
    });

    test('deleting a subscription stops delivery; another subscription of the feed still gets every message', async () => {
      const room = await newRoom('stop-room');
      const feed = await sdk.createFeed({ projectId: tenant.projectId, name: 'stoppable', visibility: 'project' });
      const gone = await sdk.createFeedSubscription({ projectId: tenant.projectId, feedId: feed.id, room: room.name, path: 'gone' });
      await sdk.createFeedSubscription({ projectId: tenant.projectId, feedId: feed.id, room: room.name, path: 'kept' });
      await sdk.publishFeedBatch({ projectId: tenant.projectId, feedId: feed.id, messages: [1, 2, 3, 4, 5] });
      await eventually(async () => allLines(await filesUnder(service, tenant, `rooms/${room.name}/gone`)).length === 5);
      await sdk.deleteFeedSubscription(tenant.projectId, feed.id, gone.id);
      await sdk.publishFeedBatch({ projectId: tenant.projectId, feedId: feed.id, messages: [6, 7] });
      await eventually(async () => allLines(await filesUnder(service, tenant, `rooms/${room.name}/kept`)).length === 7);
      // The kept subscription's later file is proof the flush ran; the deleted one got nothing more.
      assert.deepEqual(allLines(await filesUnder(service, tenant, `rooms/${room.name}/gone`)), ['1', '2', '3', '4', '5']);
    });
  });
});
