// The environment the long-running server wants from the C library, ensured by running the server
// again in it (same process, same pid: execve) when it was started without.
//
// MALLOC_MMAP_THRESHOLD_: glibc serves an allocation of 128 KiB or more with its own mapping,
// returned to the system when freed, but raises that threshold after such a block is freed, up to
// 32 MiB. Start-up allocates and frees large blocks (PGlite's files and WebAssembly, V8's compiler
// zones), so afterwards they are carved from the heap and stay there, freed or not. Fixed at
// 128 KiB, start-up's garbage goes back: idle RSS on PGlite 302–303 → 245–262 MB after a restart and
// 384–421 → 249–253 MB after a first run (docs/benchmarks.md, "Memory of the embedded default").
export const SERVER_ENV: Record<string, string> = { MALLOC_MMAP_THRESHOLD_: String(128 * 1024) };

/**
 * Re-executes this process with SERVER_ENV when it runs on glibc and a setting is missing. A value
 * the operator set is kept. Call it before loading the server: everything loaded so far is loaded again.
 */
export function ensureServerEnv(): void {
  const missing = Object.entries(SERVER_ENV).filter(([name]) => process.env[name] === undefined);
  if (missing.length === 0 || typeof process.execve !== 'function') return;
  const glibc = (process.report.getReport() as { header?: { glibcVersionRuntime?: string } }).header?.glibcVersionRuntime;
  if (!glibc) return;
  try {
    process.execve(process.execPath, [process.execPath, ...process.execArgv, ...process.argv.slice(1)], { ...process.env, ...Object.fromEntries(missing) });
  } catch (error) {
    // Only idle memory is at stake: run on as started.
    process.stderr.write(`Could not restart with ${missing.map(([name, value]) => `${name}=${value}`).join(' ')} (${(error as Error).message}); the server idles larger without.\n`);
  }
}
