// An exclusive, crash-tolerant lock on a local directory: a PID file created with O_EXCL. A lock whose
// process is gone (crash, SIGKILL) is taken over at once, unlike mtime-based locks that make a
// restarted server wait for staleness.
import { openSync, readFileSync, unlinkSync, writeSync, closeSync } from 'node:fs';

export class DirLockedError extends Error {}

export function acquireDirLock(pidFile: string): { release(): void } {
  for (let attempt = 0; attempt < 2; attempt += 1) {
    try {
      const fd = openSync(pidFile, 'wx', 0o600);
      writeSync(fd, String(process.pid));
      closeSync(fd);
      let released = false;
      return {
        release() {
          if (released) return;
          released = true;
          try { unlinkSync(pidFile); } catch { /* already gone */ }
        },
      };
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
      const owner = Number(readFileSync(pidFile, 'utf8').trim());
      if (owner && owner !== process.pid && isAlive(owner)) {
        throw new DirLockedError(
          `Another Atrium process (pid ${owner}) is using the embedded database in ${pidFile.replace(/\/[^/]+$/, '')}. ` +
          'Stop it first, use another ATRIUM_DATA_DIR, or set DATABASE_URL to share a PostgreSQL database.',
        );
      }
      try { unlinkSync(pidFile); } catch { /* raced with another taker */ }
    }
  }
  throw new DirLockedError(`Could not lock ${pidFile}`);
}

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}
