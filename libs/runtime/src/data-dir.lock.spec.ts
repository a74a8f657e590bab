import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { lockDataDir } from './data-dir.lock';

describe('lockDataDir', () => {
  let dir: string;
  beforeEach(() => {
    dir = mkdtempSync(path.join(os.tmpdir(), 'lock-'));
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  it('makes a new DATA_DIR that others may traverse (embedded PostgreSQL runs as its own user) but not list', () => {
    const fresh = path.join(dir, 'fresh', 'data');
    lockDataDir(fresh).release();
    expect(statSync(fresh).mode & 0o777).toBe(0o711);
  });

  it('claims DATA_DIR with this process id and gives it back', () => {
    const lock = lockDataDir(dir);
    expect(readFileSync(path.join(dir, 'spanforge.pid'), 'utf8').trim()).toBe(String(process.pid));
    lock.release();
    expect(existsSync(path.join(dir, 'spanforge.pid'))).toBe(false);
  });

  it('refuses a directory a live process holds, naming it, and leaves its claim alone', () => {
    const lock = lockDataDir(dir);
    expect(() => lockDataDir(dir)).toThrow(`DATA_DIR ${dir} is in use by another spanforge process (pid ${process.pid})`);
    expect(readFileSync(path.join(dir, 'spanforge.pid'), 'utf8').trim()).toBe(String(process.pid));
    lock.release();
  });

  it('takes over the claim of a process that is gone (a crash)', () => {
    const gone = spawnSync(process.execPath, ['-e', 'process.stdout.write(String(process.pid))']).stdout.toString();
    writeFileSync(path.join(dir, 'spanforge.pid'), `${gone}\n`);
    const lock = lockDataDir(dir);
    expect(readFileSync(path.join(dir, 'spanforge.pid'), 'utf8').trim()).toBe(String(process.pid));
    lock.release();
  });
});
