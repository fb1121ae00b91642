// A clock tests move by hand, for the job worker, the scheduler and handlers that accept a `Clock`.
import type { Clock } from '../../src/platform/jobs/worker.ts';

export class FakeClock implements Clock {
  #t: number;
  /** By default a little ahead of the database's clock, so rows it stamped "now" are due. */
  constructor(start: Date | number = Date.now() + 5000) {
    this.#t = typeof start === 'number' ? start : start.getTime();
  }
  now(): Date {
    return new Date(this.#t);
  }
  advance(ms: number): void {
    this.#t += ms;
  }
  set(at: Date): void {
    this.#t = at.getTime();
  }
}

/**
 * A clock that runs with real time, ahead by whatever the test has advanced it: for a whole service's
 * workers (`defaultWorkers(ctx, modules, clock)`), so that a timeout of minutes passes at once while
 * everything else keeps its pace.
 */
export class AdvancingClock implements Clock {
  #ahead = 0;
  now(): Date {
    return new Date(Date.now() + this.#ahead);
  }
  advance(ms: number): void {
    this.#ahead += ms;
  }
}
