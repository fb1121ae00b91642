// One outbound HTTP request, dispatched through an undici dispatcher with a handler of our own
// rather than through `dispatcher.request`. That API's per-request handler is an AsyncResource,
// and a request waiting on its answer then kept its objects alive through two scavenges into V8's
// old generation: 2.7–6.3 KB a request in small test programs at a model's pace, and the major
// collections that followed added to the LLM proxy's p99 (docs/contributing/performance-journal.md, "The
// proxy's calls kept out of the old generation"). The requests Atrium sends itself go this way: the
// LLM proxy's calls to providers, webhook deliveries and calls to the room server (the SDKs it
// uses, Stripe's and S3's, send their own).
import type { IncomingHttpHeaders } from 'node:http';
import { Readable } from 'node:stream';
import type { Dispatcher } from 'undici';

/** An answer: status and headers once they arrive, the body as it comes. */
export interface HttpAnswer {
  statusCode: number;
  headers: IncomingHttpHeaders;
  body: Readable;
}

/**
 * `answer` settles when the answer's headers arrive, or with the error that came first; `abort()`
 * gives up the request (and its answer's body) at any point. The body is a plain `Readable`, paused
 * and resumed with its reader; a body given up before its end gives up the request.
 */
export class HttpExchange implements Dispatcher.DispatchHandler {
  readonly answer: Promise<HttpAnswer>;
  #aborted = false;
  #ended = false;
  #controller: Dispatcher.DispatchController | undefined;
  #reason = '';
  #body: Readable | undefined;
  #resolve!: (answer: HttpAnswer) => void;
  #reject!: (error: Error) => void;

  constructor(dispatcher: Dispatcher, options: Dispatcher.DispatchOptions) {
    this.answer = new Promise((resolve, reject) => {
      this.#resolve = resolve;
      this.#reject = reject;
    });
    dispatcher.dispatch(options, this);
  }

  /** Whether `abort()` gave the request up before it ended. */
  get aborted(): boolean {
    return this.#aborted;
  }

  /** Gives the request up, unless it has ended; `reason` becomes the error of its answer or body. */
  abort(reason = 'The request was given up'): void {
    if (this.#aborted || this.#ended) return;
    this.#aborted = true;
    this.#reason = reason;
    this.#controller?.abort(new Error(reason));
  }

  onRequestStart(controller: Dispatcher.DispatchController): void {
    this.#controller = controller;
    if (this.#aborted) controller.abort(new Error(this.#reason));
  }

  onResponseStart(controller: Dispatcher.DispatchController, statusCode: number, headers: IncomingHttpHeaders): void {
    if (statusCode < 200) return;
    this.#body = new Readable({
      highWaterMark: 64 * 1024,
      read: () => controller.resume(),
      destroy: (error, callback) => {
        this.abort();
        // An error in the turn that brought the headers would be emitted before the reader,
        // awaiting `answer`, could listen for it, and so crash the process: it waits a turn.
        if (error && this.#body!.listenerCount('error') === 0) setImmediate(callback, error);
        else callback(error);
      },
    });
    this.#resolve({ statusCode, headers, body: this.#body });
  }

  onResponseData(controller: Dispatcher.DispatchController, chunk: Buffer): void {
    if (!this.#body!.push(chunk)) controller.pause();
  }

  onResponseEnd(): void {
    this.#ended = true;
    this.#body!.push(null);
  }

  onResponseError(_controller: Dispatcher.DispatchController, error: Error): void {
    this.#ended = true;
    if (this.#body) this.#body.destroy(error);
    else this.#reject(error);
  }
}
