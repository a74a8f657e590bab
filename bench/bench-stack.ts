import { chmodSync, mkdtempSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { Registry } from 'prom-client';
import { ApiModule, createApiApplication, listenApi } from '@spanforge/api-app';
import {
  FairScheduler,
  decayInWords,
  engineAllocatorDecayMs,
  engineSettings,
  type ClickHouseClient,
  type EngineSettings,
} from '@spanforge/clickhouse';
import { loadConfig } from '@spanforge/config';
import { Gateway, GatewayModule } from '@spanforge/gateway-app';
import type { QueueBackend } from '@spanforge/queue';
import { CLICKHOUSE, QUEUES, prepareProcess, roleRoot, type Logger, type ShutdownSequence } from '@spanforge/runtime';
import { DataPolicyRepository, TenancyService } from '@spanforge/tenancy';
import { WorkerModule, Workers } from '@spanforge/worker-app';
import { reasonOf } from '@spanforge/postgres';
import { argument, progress } from './report';

/** The all-in-one's services for a bench, and its roles, started when the bench is ready for each. */
export interface BenchStack {
  clickhouse: ClickHouseClient;
  tenancy: TenancyService;
  policies: DataPolicyRepository;
  queues: QueueBackend;
  /** The statements' turns at ClickHouse (the API's projects and the worker). */
  querySlots: FairScheduler;
  metrics: Registry;
  log: Logger;
  shutdown: ShutdownSequence;
  /** Starts the queue consumers; returns the banner lines. */
  startWorkers(): Promise<string[]>;
  /** Starts the OTLP receivers; returns the banner lines (the HTTP one first). */
  startGateway(): Promise<string[]>;
  /** Starts the api; returns its http://localhost:port. */
  startApi(): Promise<string>;
}

/**
 * The all-in-one's Nest application on `dataDir`, quiet, on ports the system picks (`settings` adds
 * to or overrides that), with nothing started: each role starts when the bench calls for it.
 */
export async function startBenchStack(
  dataDir: string,
  settings: Record<string, string> = {},
  options: { driver?: 'mercurius' | 'apollo' } = {},
): Promise<BenchStack> {
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
  const context = await prepareProcess(config, 'all-in-one');
  try {
    const app = await createApiApplication(context, roleRoot(context, [WorkerModule, GatewayModule, ApiModule.forRoot(options.driver)]));
    return {
      clickhouse: app.get(CLICKHOUSE),
      tenancy: app.get(TenancyService),
      policies: app.get(DataPolicyRepository),
      queues: app.get(QUEUES),
      querySlots: app.get(FairScheduler),
      metrics: context.metrics,
      log: context.log,
      shutdown: context.shutdown,
      startWorkers: () => app.get(Workers).start(),
      startGateway: () => app.get(Gateway).start(),
      startApi: async () => (await listenApi(context, app)).url,
    };
  } catch (error) {
    await context.shutdown.run();
    throw error;
  }
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

/**
 * The decay the embedded engine's allocator runs with (it moves the throughput: docs/scaling.md),
 * printed for the run and returned for its results; null, with the reason printed, when the
 * allocator's statistics cannot be read.
 */
export async function reportedAllocatorDecay(clickhouse: ClickHouseClient): Promise<number | null> {
  const decayMs = await engineAllocatorDecayMs(clickhouse).catch((error: unknown) => {
    progress(`the engine's allocator statistics could not be read (${reasonOf(error)}): engineAllocatorDirtyDecayMs is null`);
    return null;
  });
  progress(`the engine's allocator hands freed pages back ${decayInWords(decayMs)}`);
  return decayMs;
}

/**
 * The server settings the embedded engine started with (its query condition cache's size, its
 * merges' nice value), printed for the run and returned for its results; null, with the reason
 * printed, when they cannot be read.
 */
export async function reportedEngineSettings(clickhouse: ClickHouseClient): Promise<EngineSettings | null> {
  const settings = await engineSettings(clickhouse).catch((error: unknown) => {
    progress(`the engine's server settings could not be read (${reasonOf(error)}): engineSettings is null`);
    return null;
  });
  if (settings)
    progress(`the engine runs with a ${settings.conditionCacheMiB} MiB query condition cache and its merges at nice ${settings.mergeNice}`);
  return settings;
}

/**
 * Waits (at most a minute) until ClickHouse has no merge running and no mutation left to run that
 * has not failed (a migration's index being built on the seeded data): a merge left by one phase
 * would tax the next.
 */
export async function quiet(clickhouse: ClickHouseClient): Promise<void> {
  const deadline = Date.now() + 60_000;
  while (Date.now() < deadline) {
    const result = await clickhouse.query({
      query: `SELECT (SELECT count() FROM system.merges) + (SELECT count() FROM system.mutations WHERE NOT is_done AND latest_fail_reason = '') AS n`,
      format: 'JSONEachRow',
    });
    const [row] = await result.json<{ n: string }>();
    if (Number(row?.n ?? 0) === 0) return;
    await new Promise((r) => setTimeout(r, 200));
  }
  progress('ClickHouse still merged or mutated after a minute: the next phase starts beside it');
}
