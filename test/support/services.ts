import { mkdirSync } from 'node:fs';
import path from 'node:path';
import { Client, type Pool } from 'pg';
import { loadConfig, type AppConfig } from '@spanforge/config';
import { createPostgresPool } from '@spanforge/postgres';

export function testDatabaseUrl(): string {
  const url = process.env.SPANFORGE_TEST_DATABASE_URL;
  if (!url) throw new Error('SPANFORGE_TEST_DATABASE_URL is unset: run integration tests through jest (global setup starts PostgreSQL)');
  return url;
}

/**
 * A database of its own on the test PostgreSQL, empty (not migrated), dropped by `drop`: for tests
 * that must see a first run, or whose rows the workers of other suites (which share the test
 * database) must not take.
 */
export async function freshTestDatabase(): Promise<{ pool: Pool; drop: () => Promise<void> }> {
  const name = `test_${process.pid}_${Math.random().toString(36).slice(2, 8)}`;
  const admin = new Client({ connectionString: testDatabaseUrl() });
  await admin.connect();
  await admin.query(`CREATE DATABASE ${name}`);
  const url = new URL(testDatabaseUrl());
  url.pathname = `/${name}`;
  // pool.end() resolves while its connections are still closing, so DROP ... WITH (FORCE) below may
  // terminate one of them; the pool says so, which is right but not what these tests are about.
  const cleanup: string[] = [];
  const pool = createPostgresPool(url.toString(), 4, { warn: (m) => cleanup.push(m), error: (m) => cleanup.push(m) });
  return {
    pool,
    drop: async () => {
      await pool.end();
      await admin.query(`DROP DATABASE ${name} WITH (FORCE)`);
      await admin.end();
    },
  };
}

/** Undefined when redis-server is not installed locally (the setup printed a SKIPPED banner; CI refuses that). */
export function testRedisUrl(): string | undefined {
  return process.env.SPANFORGE_TEST_REDIS_URL;
}

/**
 * The data directory of this jest worker. chDB binds one data directory per process, so every
 * test in a worker that opens chDB must use this one (its `clickhouse/` subdirectory).
 */
export function workerDataDir(): string {
  const dir = path.join(process.env.SPANFORGE_TEST_ROOT ?? '/tmp/spanforge-test', `worker-${process.env.JEST_WORKER_ID ?? '0'}`);
  mkdirSync(dir, { recursive: true });
  return dir;
}

/** A config for an in-process all-in-one (the ingest harness) on the shared test PostgreSQL and this worker's chDB. */
export function testConfig(overrides: Record<string, string> = {}): AppConfig {
  return loadConfig({
    DATA_DIR: workerDataDir(),
    DATABASE_URL: testDatabaseUrl(),
    OTLP_HTTP_PORT: '0',
    OTLP_GRPC_PORT: '0',
    API_PORT: '0',
    HOST: '127.0.0.1',
    ADMIN_TOKEN: 'test-admin-token-0123456789',
    API_KEY_PEPPER: 'test-pepper-0123456789abcdef',
    LOG_LEVEL: 'warn',
    ...overrides,
  });
}
