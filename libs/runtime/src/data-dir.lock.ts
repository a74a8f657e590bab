import { closeSync, mkdirSync, openSync, readFileSync, rmSync, writeSync } from 'node:fs';
import path from 'node:path';
import { isAlive } from '@spanforge/postgres';
import { StartRefused } from './start-refused';

const LOCK_FILE = 'spanforge.pid';

function isSpanforgeProcess(pid: number): boolean {
  if (pid === process.pid) return true;
  if (!isAlive(pid)) return false;
  // A pid reused by something else since a crash does not hold the directory.
  try {
    return readFileSync(`/proc/${pid}/cmdline`, 'utf8').includes('node');
  } catch {
    return true;
  }
}

export interface DataDirLock {
  release(): void;
}

/**
 * One all-in-one process per DATA_DIR. A second one would find the first one's PostgreSQL running
 * and, taking it for an orphan of a crash, stop it. So the directory is claimed first, in
 * `spanforge.pid`; a claim whose process is gone (a crash) is taken over.
 */
export function lockDataDir(dataDir: string): DataDirLock {
  // Traversable, not listable, by others: embedded PostgreSQL runs as its own user (as root) and must
  // reach its cluster inside; nobody else needs to see what is kept here (secrets, every span).
  mkdirSync(dataDir, { recursive: true, mode: 0o711 });
  const file = path.join(dataDir, LOCK_FILE);
  for (let attempt = 0; attempt < 3; attempt++) {
    try {
      const fd = openSync(file, 'wx', 0o600);
      writeSync(fd, `${process.pid}\n`);
      closeSync(fd);
      const release = () => {
        try {
          if (readFileSync(file, 'utf8').trim() === String(process.pid)) rmSync(file, { force: true });
        } catch {
          // Already gone.
        }
      };
      process.once('exit', release);
      return {
        release: () => {
          process.removeListener('exit', release);
          release();
        },
      };
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
    }
    const owner = Number.parseInt(readFileSync(file, 'utf8').trim(), 10);
    if (Number.isInteger(owner) && owner > 0 && isSpanforgeProcess(owner)) {
      throw new StartRefused(
        `DATA_DIR ${dataDir} is in use by another spanforge process (pid ${owner}): stop it first, or start this one with another DATA_DIR`,
      );
    }
    rmSync(file, { force: true });
  }
  throw new Error(`could not claim DATA_DIR ${dataDir} (${file} keeps coming back)`);
}
