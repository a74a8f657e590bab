import { chmodSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { reachableClusterDir } from './embedded-postgres';

describe('reachableClusterDir', () => {
  const dirs: string[] = [];
  const tempDir = (mode: number) => {
    const dir = mkdtempSync(path.join(os.tmpdir(), 'reach-'));
    chmodSync(dir, mode);
    dirs.push(dir);
    return dir;
  };
  afterAll(() => dirs.forEach((d) => rmSync(d, { recursive: true, force: true })));

  it('keeps the cluster inside a traversable DATA_DIR', () => {
    const dataDir = path.join(tempDir(0o755), 'data');
    expect(reachableClusterDir(dataDir)).toEqual({ dir: path.join(dataDir, 'postgres'), moved: false });
  });

  it('moves it out of a directory the postgres user cannot enter (as root), the same place every time', () => {
    const dataDir = path.join(tempDir(0o700), 'data');
    const first = reachableClusterDir(dataDir);
    if (process.getuid?.() !== 0) {
      // Not root: the server runs as this user, who can enter its own directories.
      expect(first).toEqual({ dir: path.join(dataDir, 'postgres'), moved: false });
      return;
    }
    expect(first.moved).toBe(true);
    expect(first.dir).toMatch(/^\/var\/lib\/spanforge\/[0-9a-f]{12}\/postgres$/);
    expect(reachableClusterDir(dataDir)).toEqual(first);
  });

  it('follows the location recorded by an earlier start', () => {
    const dataDir = tempDir(0o755);
    writeFileSync(path.join(dataDir, 'postgres.location'), '/srv/pg/cluster\n');
    expect(reachableClusterDir(dataDir)).toEqual({ dir: '/srv/pg/cluster', moved: true });
  });
});
