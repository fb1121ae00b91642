// Node flags for the long-running server (`atrium serve`), in one place: bin/atrium.js, the test
// harness and the benchmarks import this list; package.json's "start" script cannot import, so it
// spells them out and test/e2e/npm-start.test.ts checks that the server it starts has every one.
// Plain JavaScript because bin/atrium.js may run on an older node than the server's.
//
// --max-semi-space-size=16: V8 sizes the young generation from the machine's memory (here 128 MB
// committed) and keeps it once start-up's garbage (loading the code) has grown it; capped at
// 2 × 16 MB, the server idles about 100 MB smaller, with no CPU cost per request that side-by-side
// runs could see (docs/benchmarks.md "Memory of the embedded default"). It must be on the command
// line: V8 sizes its heap when the process starts, `v8.setFlagsFromString` later has no effect.
export const SERVE_NODE_FLAGS = ['--max-semi-space-size=16'];
