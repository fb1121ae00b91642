// PGlite whose SQL parser V8 never optimises, which takes most of the server's peak memory off a
// restart (docs/benchmarks.md, "Memory of the embedded default").
import { setFlagsFromString } from 'node:v8';
import { PGlite, type PGliteOptions } from '@electric-sql/pglite';

/** A function index no WebAssembly module has: with it as the filter, no function may be optimised. */
const NO_FUNCTION = 2 ** 31 - 1;

/**
 * V8 optimises a WebAssembly function with TurboFan once it has run enough, and it counts a loop's
 * whole body on each iteration. PostgreSQL's SQL parser (bison's `base_yyparse`, one 105 KB
 * function of pglite.wasm) is a loop around a switch over every grammar action, so the first query
 * parsed makes it "hot", and its TurboFan compile then holds about 600 MB for about two seconds:
 * most of the server's peak on a restart.
 *
 * V8 settles whether a function may ever be optimised when it first compiles it, at its first call,
 * and `--wasm-tier-up-filter` set to an index no function has settles it as "never". So the first
 * statement this instance runs, an empty one, runs under that filter. It reaches the parser, the
 * start and commit of a transaction, and little else: about 50 functions stay on V8's baseline
 * tier, about 20 of which would have been optimised later. Atrium parses each statement text once
 * (named statements, pglite-statements.ts), so the parser's speed hardly matters after that.
 *
 * PGlite's own first query is the one `_initArrayTypes` sends at the end of its start-up (its base
 * class declares the method for implementations to call), so the empty statement goes in front of
 * it. Should a later PGlite or Node stop calling it or ignore the flag, the parser is optimised as
 * before and only the peak returns (test/e2e/npm-start.test.ts bounds it).
 */
export class PGliteWithColdParser extends PGlite {
  #parserCompiled = false;

  override async _initArrayTypes(options?: { force?: boolean }): Promise<void> {
    if (!this.#parserCompiled) {
      this.#parserCompiled = true;
      setFlagsFromString(`--wasm-tier-up-filter=${NO_FUNCTION}`);
      try {
        await this.exec('');
      } finally {
        setFlagsFromString('--wasm-tier-up-filter=-1');
      }
    }
    return super._initArrayTypes(options);
  }

  /** PGlite.create for this class (PGlite's own constructs a PGlite). */
  static async open(dataDir: string, options: PGliteOptions): Promise<PGliteWithColdParser> {
    const client = new PGliteWithColdParser(dataDir, options);
    await client.waitReady;
    return client;
  }
}
