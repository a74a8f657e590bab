import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { chmodSync, mkdtempSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
// Jest loads global setup outside its module mapper, so these imports are by path.
// eslint-disable-next-line @nx/enforce-module-boundaries
import { setEngineAllocatorOptions } from '../../libs/config/src';
// eslint-disable-next-line @nx/enforce-module-boundaries
import { findFreePort, startEmbeddedPostgres, type EmbeddedPostgresHandle } from '../../libs/postgres/src';

/**
 * Starts the real services once per test run: embedded PostgreSQL under os.tmpdir() (reachable by
 * the postgres user even when the checkout lives under a 0700 home) and a redis-server on a free
 * port. Their URLs reach the test workers through the environment.
 */
export default async function globalSetup(): Promise<void> {
  const root = mkdtempSync(path.join(os.tmpdir(), 'spanforge-test-'));
  // mkdtemp makes 0700; the postgres user (as root) must traverse it to keep the cluster inside.
  chmodSync(root, 0o755);
  process.env.SPANFORGE_TEST_ROOT = root;
  const postgres = await startEmbeddedPostgres({ dataDir: path.join(root, 'postgres-data') });
  process.env.SPANFORGE_TEST_DATABASE_URL = postgres.url;
  const redis = await startRedis();
  if (redis) process.env.SPANFORGE_TEST_REDIS_URL = redis.url;
  (globalThis as Record<string, unknown>).__spanforgeServices = { postgres, redis };
  // The engines the tests start run with the allocator options the all-in-one gives its engine.
  // The all-in-one sets them in process.env just before libchdb loads, but a test file's
  // process.env is Jest's copy, which never reaches the C environment the library reads: set here,
  // in the process that starts the test workers (and runs the tests in band), they are in the
  // environment of every process that loads libchdb. Set after the services start, so that they
  // stay the engines' (a redis-server built with jemalloc may read them too).
  setEngineAllocatorOptions();
}

async function startRedis(): Promise<{ url: string; process: ChildProcess } | undefined> {
  const which = spawnSync('sh', ['-c', 'command -v redis-server']);
  if (which.status !== 0) {
    const banner = '!'.repeat(78);
    const message = 'redis-server not found: the Redis queue lane is SKIPPED. Install it (apt-get install redis-server) to run it.';
    if (process.env.CI) throw new Error(`${message} CI must run the Redis lane.`);
    process.stderr.write(`\n${banner}\n!! ${message}\n${banner}\n\n`);
    return undefined;
  }
  const port = await findFreePort();
  const child = spawn('redis-server', ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'], {
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  await new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error('redis-server did not start in 10 s')), 10_000);
    child.stdout?.on('data', (chunk: Buffer) => {
      if (chunk.toString().includes('Ready to accept connections')) {
        clearTimeout(timer);
        resolve();
      }
    });
    child.on('exit', (code) => reject(new Error(`redis-server exited with ${code}`)));
  });
  return { url: `redis://127.0.0.1:${port}`, process: child };
}

export type TestServices = { postgres: EmbeddedPostgresHandle; redis?: { url: string; process: ChildProcess } };
