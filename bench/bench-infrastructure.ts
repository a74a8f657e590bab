import { chmodSync, mkdtempSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { ClickHouseClient } from '@spanforge/clickhouse';
import { loadConfig } from '@spanforge/config';
import { startInfrastructure, type Infrastructure } from '@spanforge/runtime';
import { argument } from './report';

/** The all-in-one's services on `dataDir`, quiet, on ports the system picks; `settings` adds to or overrides that. */
export function startBenchInfrastructure(dataDir: string, settings: Record<string, string> = {}): Promise<Infrastructure> {
  // The benches measure one client as fast as it goes: a project's API rate limit would cut them off (bench:fairness sets its own).
  const config = loadConfig({
    DATA_DIR: dataDir,
    HOST: '127.0.0.1',
    OTLP_HTTP_PORT: '0',
    OTLP_GRPC_PORT: '0',
    API_PORT: '0',
    LOG_LEVEL: 'warn',
    API_REQUESTS_PER_SECOND: '1000000',
    API_CONCURRENT_REQUESTS: '10000',
    ...settings,
  });
  return startInfrastructure(config, 'all-in-one');
}

/** A fresh data directory under the system's temp dir, readable by the postgres user embedded PostgreSQL runs as. */
export function temporaryDataDir(prefix: string): string {
  const dataDir = mkdtempSync(path.join(os.tmpdir(), prefix));
  chmodSync(dataDir, 0o755);
  return dataDir;
}

/** `--spans N` and `--data-dir DIR` of the seeded benchmarks (default 1,000,000 spans in .data-bench). */
export function seededDatasetArguments(): { spans: number; dataDir: string } {
  return { spans: Number(argument('--spans', '1000000')), dataDir: path.resolve(argument('--data-dir', '.data-bench')) };
}

/** Waits (at most a minute) until ClickHouse has no merge running: a merge left by one phase would tax the next. */
export async function quiet(clickhouse: ClickHouseClient): Promise<void> {
  const deadline = Date.now() + 60_000;
  while (Date.now() < deadline) {
    const result = await clickhouse.query({ query: 'SELECT count() AS n FROM system.merges', format: 'JSONEachRow' });
    const [row] = await result.json<{ n: string }>();
    if (Number(row?.n ?? 0) === 0) return;
    await new Promise((r) => setTimeout(r, 200));
  }
}
