// A pool of slots an instance shares between tenants: at most `total` in use at once, and at most
// `perKey` of them by one key (a project), so that one tenant holding its share leaves the rest
// free for everyone else.
export class FairSlots {
  readonly #total: number;
  readonly #perKey: number;
  readonly #byKey = new Map<string, number>();
  #used = 0;

  constructor(total: number, perKey: number) {
    this.#total = total;
    this.#perKey = perKey;
  }

  /** Takes a slot for `key`; false when the pool or the key's share is full. */
  acquire(key: string): boolean {
    const mine = this.#byKey.get(key) ?? 0;
    if (this.#used >= this.#total || mine >= this.#perKey) return false;
    this.#byKey.set(key, mine + 1);
    this.#used += 1;
    return true;
  }

  /** Gives back a slot `acquire` gave `key`. */
  release(key: string): void {
    const mine = this.#byKey.get(key) ?? 0;
    if (mine === 0) return;
    if (mine === 1) this.#byKey.delete(key);
    else this.#byKey.set(key, mine - 1);
    this.#used -= 1;
  }
}
