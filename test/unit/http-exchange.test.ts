// One outbound request (the LLM proxy's, a webhook delivery's), against undici's dispatcher
// contract: the answer's body reads like any stream, its reader's pace reaches the connection, and
// an error that comes in the same turn as the headers reaches whoever reads the body instead of
// crashing the process.
import assert from 'node:assert/strict';
import { once } from 'node:events';
import { test } from 'node:test';
import type { Dispatcher } from 'undici';
import { HttpExchange } from '../../src/platform/http/exchange.ts';

/**
 * A dispatcher that plays a script against the handler in one turn of the event loop, as undici's
 * parser does with what one read of the socket brought.
 */
function scripted(play: (handler: Dispatcher.DispatchHandler, controller: Dispatcher.DispatchController) => void) {
  const calls: string[] = [];
  const controller: Dispatcher.DispatchController = {
    aborted: false, paused: false, reason: null,
    abort: (reason) => calls.push(`abort: ${reason.message}`),
    pause: () => calls.push('pause'),
    resume: () => calls.push('resume'),
  };
  const dispatcher = { dispatch: (_options: unknown, handler: Dispatcher.DispatchHandler) => (setImmediate(() => play(handler, controller)), true) } as unknown as Dispatcher;
  return { dispatcher, calls };
}

const OPTIONS = { method: 'POST', path: '/v1/chat/completions' } as const;

test('an answer: status, headers and the body as it came', async () => {
  const { dispatcher } = scripted((handler, controller) => {
    handler.onRequestStart!(controller, {});
    handler.onResponseStart!(controller, 200, { 'content-type': 'application/json' });
    handler.onResponseData!(controller, Buffer.from('{"a":'));
    handler.onResponseData!(controller, Buffer.from('1}'));
    handler.onResponseEnd!(controller, {});
  });
  const answer = await new HttpExchange(dispatcher, OPTIONS).answer;
  assert.equal(answer.statusCode, 200);
  assert.equal(answer.headers['content-type'], 'application/json');
  assert.equal(Buffer.concat(await answer.body.toArray()).toString(), '{"a":1}');
});

test('an error in the same turn as the headers reaches the body\'s reader', async () => {
  const { dispatcher } = scripted((handler, controller) => {
    handler.onRequestStart!(controller, {});
    handler.onResponseStart!(controller, 200, {});
    handler.onResponseError!(controller, new Error('other side closed'));
  });
  const answer = await new HttpExchange(dispatcher, OPTIONS).answer;
  const [error] = await once(answer.body, 'error');
  assert.equal((error as Error).message, 'other side closed');
});

test('an error before any answer rejects it; abort() before the request starts stops it when it does', async () => {
  const failing = scripted((handler) => handler.onResponseError!(null as never, new Error('connect ECONNREFUSED')));
  await assert.rejects(new HttpExchange(failing.dispatcher, OPTIONS).answer, /ECONNREFUSED/);

  const late = scripted((handler, controller) => handler.onRequestStart!(controller, {}));
  const exchange = new HttpExchange(late.dispatcher, OPTIONS);
  exchange.abort('The client closed the connection');
  assert.ok(exchange.aborted);
  await new Promise((resolve) => setImmediate(resolve));
  assert.deepEqual(late.calls, ['abort: The client closed the connection'], 'the request is stopped as it starts, for the reason given');
});

test('a slow reader pauses the connection and resumes it; a body given up gives up the request', async () => {
  const { dispatcher, calls } = scripted((handler, controller) => {
    handler.onRequestStart!(controller, {});
    handler.onResponseStart!(controller, 200, {});
    handler.onResponseData!(controller, Buffer.alloc(128 * 1024));
  });
  const exchange = new HttpExchange(dispatcher, OPTIONS);
  const answer = await exchange.answer;
  assert.deepEqual(calls, ['pause'], 'more than the body holds: the connection is paused');
  answer.body.read();
  assert.ok(calls.includes('resume'), 'reading asks for more');
  answer.body.destroy();
  assert.ok(exchange.aborted);
  assert.ok(calls.some((c) => c.startsWith('abort')), 'the request is given up');
});
