import path from 'node:path';
import { Module } from '@nestjs/common';
import { engineAllocatorOptions, projectRoot } from '@spanforge/config';
import { Histogram } from 'prom-client';
import {
  ClockBound,
  FairScheduler,
  WORKER_PARTICIPANT,
  clickHouseTarget,
  clockBoundClient,
  createClickHouseClient,
  decayAskedFor,
  decayInWords,
  describeTarget,
  engineAllocatorDecayMs,
  engineSettings,
  migrateClickHouse,
  namedStatement,
  type ClickHouseClient,
  type ClockProbe,
  type EngineSettings,
} from '@spanforge/clickhouse';
import type { Pool, PoolClient } from 'pg';
import { reasonOf, withAdvisoryLock } from '@spanforge/postgres';
import type { Logger } from '../logger';
import type { ProcessContext } from '../process';
import { Postgres, PostgresModule } from './postgres.module';
import { CLICKHOUSE, PROCESS } from './tokens';

/**
 * Arbitrary constant: the PostgreSQL advisory lock processes take while migrating a ClickHouse
 * server. The ClickHouse migrator applies a migration statement by statement and ClickHouse has no
 * lock of its own, so two processes starting at once would interleave one migration's statements
 * (013's copy-and-exchange of `feedback` could swap the tables back). Embedded chDB is one process's.
 */
const CLICKHOUSE_MIGRATION_LOCK = 7_304_211_903;

/** The ClickHouse client (embedded chDB or a server over HTTP), migrated before use. */
async function openClickHouse(context: ProcessContext, postgres: Postgres): Promise<ClickHouseClient> {
  const { config, log, shutdown, readiness } = context;
  const target = clickHouseTarget(config);
  const clickhouse = createClickHouseClient(target);
  shutdown.add('close-clients', 'ClickHouse client', () => clickhouse.close());
  const migrate = () => migrateClickHouse(clickhouse, path.join(projectRoot(), 'infra', 'clickhouse'));
  const migrations =
    target.kind === 'server'
      ? await withAdvisoryLock(postgres.pool, CLICKHOUSE_MIGRATION_LOCK, 'ClickHouse migrations', migrate, log.child('clickhouse'))
      : await migrate();
  if (migrations.applied.length) log.info(`ClickHouse migrations applied: ${migrations.applied.join(', ')}`);
  context.services.clickhouse = describeTarget(target);
  if (target.kind === 'embedded') {
    const configured = { conditionCacheMiB: config.clickhouseConditionCacheMiB, mergeNice: config.clickhouseMergeNice };
    await checkEngineSettings(clickhouse, configured, log.child('clickhouse'));
    await reportEngineAllocator(clickhouse, engineAllocatorOptions(), log.child('clickhouse'));
  }
  // A gateway only queues (its ClickHouse use is the Langfuse scores endpoint): it takes exports
  // while ClickHouse is away, and the worker stores them when it is back, so a balancer must not pull it for that.
  if (context.mode !== 'gateway') {
    readiness.add('clickhouse', async () => {
      const result = await clickhouse.ping();
      if (!result.success) throw result.error;
    });
  }
  if (target.kind !== 'server' || !target.cluster) return clickhouse;
  // Several servers, several clocks: the figures' stamps stay ordered (libs/clickhouse/src/clock-bound.ts).
  // The gateway too: its Langfuse scores endpoint writes feedback and recomputes session figures.
  const maxOffsetMs = target.maxClockOffsetMs;
  const bound = new ClockBound(clockProbe(clickhouse, postgres.pool), { maxOffsetMs, log: log.child('clock'), registry: context.metrics });
  await bound.start();
  shutdown.add('close-clients', 'ClickHouse clock check', async () => bound.stop());
  return clockBoundClient(clickhouse, bound, maxOffsetMs);
}

/**
 * Says the embedded engine's server settings (its query condition cache's size, its merges' nice
 * value), and warns of each the engine did not take as configured: it takes its arguments from the
 * first connection to its directory in the process, so another opened before this client (a
 * library's, a test's) would have set none.
 */
export async function checkEngineSettings(clickhouse: ClickHouseClient, configured: EngineSettings, log: Logger): Promise<void> {
  let started: EngineSettings;
  try {
    started = await engineSettings(clickhouse);
  } catch (error) {
    // Only a report: the engine runs either way.
    log.warn(`embedded engine: could not read its server settings: ${reasonOf(error)}`);
    return;
  }
  const settings = [
    { name: 'query condition cache of', unit: ' MiB', variable: 'CLICKHOUSE_CONDITION_CACHE_MIB', key: 'conditionCacheMiB' },
    { name: 'merges at nice', unit: '', variable: 'CLICKHOUSE_MERGE_NICE', key: 'mergeNice' },
  ] as const;
  for (const { name, unit, variable, key } of settings) {
    const value = started[key];
    if (value === configured[key]) log.info(`embedded engine: ${name} ${value}${unit} (${variable})`);
    else
      log.warn(
        `embedded engine: ${name} ${value}${unit}, not the ${configured[key]}${unit} of ${variable}: ` +
          'something else in this process opened the engine first, without it',
      );
  }
}

/**
 * Says how soon the embedded engine's allocator hands freed pages back, and warns when it did not
 * take the decay its options (JE_MALLOC_CONF) ask for. The allocator reads them once, from the C
 * environment, when libchdb is loaded: it runs with chDB's own when the library was loaded before
 * they were set, when the runtime keeps process.env apart from the C environment (a worker thread,
 * a test runner's sandbox), or when it refused them (it says so on stderr, in `<jemalloc>:` lines).
 */
export async function reportEngineAllocator(clickhouse: ClickHouseClient, options: string, log: Logger): Promise<void> {
  let took: number | null;
  try {
    took = await engineAllocatorDecayMs(clickhouse);
  } catch (error) {
    // Only a report: the engine runs either way.
    log.warn(`embedded engine: could not read its allocator's statistics: ${reasonOf(error)}`);
    return;
  }
  if (took === null) {
    log.warn(`embedded engine: its allocator's statistics name no decay; JE_MALLOC_CONF="${options}" may not apply to it`);
    return;
  }
  const asked = decayAskedFor(options);
  const when = decayInWords(took);
  if (asked === undefined || asked === took)
    log.info(`embedded engine: its allocator hands freed pages back ${when} (JE_MALLOC_CONF="${options}")`);
  else
    log.warn(
      `embedded engine: its allocator hands freed pages back ${when}, not ${decayInWords(asked)} as JE_MALLOC_CONF="${options}" asks: ` +
        'libchdb was loaded before they were set, or they never reached the C environment, or jemalloc refused them (its "<jemalloc>:" lines on stderr say so)',
    );
}

/**
 * The ClickHouse server's clock and PostgreSQL's, the reference every process shares (ClockBound).
 * A check's readings are made on one connection taken before them, so that waiting for a
 * connection of the pool is not counted in their round trips.
 */
export function clockProbe(clickhouse: ClickHouseClient, pool: Pool): ClockProbe {
  let connection: PoolClient | undefined;
  return {
    prepare: async () => {
      const taken = await pool.connect();
      connection = taken;
      return () => {
        connection = undefined;
        taken.release();
      };
    },
    clickhouseMs: async () => {
      const result = await clickhouse.query({
        query: 'SELECT toUnixTimestamp64Micro(now64(6)) AS us',
        format: 'JSONEachRow',
        ...namedStatement('clock.probe'),
      });
      return Number((await result.json<{ us: string | number }>())[0]!.us) / 1000;
    },
    referenceMs: async () => {
      const { rows } = await (connection ?? pool).query<{ ms: string }>('SELECT extract(epoch FROM clock_timestamp()) * 1000 AS ms');
      return Number(rows[0]!.ms);
    },
  };
}

/** A statement whose recent runs (its project's, of its name) took longer than this on average (ms) waits for the shared slot, not the express lane. */
const EXPRESS_LIGHT_STATEMENT_MS = 100;

/**
 * The engine's time shared between projects' statements (and the worker's): the embedded engine
 * runs one statement at a time in the shared lane (and a sequential client's short one in the
 * express lane), a server CLICKHOUSE_QUERY_SLOTS at once.
 */
function querySlots(context: ProcessContext): FairScheduler {
  // The embedded engine: one shared slot, and an express lane on a second session for light clients' short statements.
  const embedded = clickHouseTarget(context.config).kind === 'embedded';
  const scheduler = embedded
    ? new FairScheduler(1, {
        slots: 1,
        lightStatementMs: EXPRESS_LIGHT_STATEMENT_MS,
        maxShare: context.config.clickhouseExpressSharePercent / 100,
      })
    : new FairScheduler(context.config.clickhouseQuerySlots);
  const buckets = [0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];
  const waits = new Histogram({
    name: 'spanforge_clickhouse_statement_wait_seconds',
    help: 'How long statements waited for their turn at ClickHouse (FairScheduler), of the worker or of projects, by the lane they got',
    labelNames: ['participant', 'lane'],
    buckets,
    registers: [context.metrics],
  });
  const runs = new Histogram({
    name: 'spanforge_clickhouse_statement_seconds',
    help: 'How long statements held their turn at ClickHouse (FairScheduler), from start to result read, of the worker or of projects, by lane',
    labelNames: ['participant', 'lane'],
    buckets,
    registers: [context.metrics],
  });
  const who = (participant: string) => (participant === WORKER_PARTICIPANT ? 'worker' : 'project');
  scheduler.observeWaits((participant, ms, lane) => waits.observe({ participant: who(participant), lane }, ms / 1000));
  scheduler.observeRuns((participant, ms, _statement, lane) => runs.observe({ participant: who(participant), lane }, ms / 1000));
  return scheduler;
}

@Module({
  imports: [PostgresModule],
  providers: [
    { provide: CLICKHOUSE, inject: [PROCESS, Postgres], useFactory: openClickHouse },
    { provide: FairScheduler, inject: [PROCESS], useFactory: querySlots },
  ],
  exports: [CLICKHOUSE, FairScheduler],
})
export class ClickHouseModule {}
