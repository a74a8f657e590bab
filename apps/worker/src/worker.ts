import { Inject, Injectable, Module } from '@nestjs/common';
import { UnrecoverableError, type Job } from 'bullmq';
import { Counter, Gauge } from 'prom-client';
import {
  BatchingQueue,
  DeadLetterRepository,
  ErasureRepository,
  RetentionRepository,
  SpanLogEventRepository,
  SpanMetricsSealer,
  SpanRepository,
  SpanWriter,
  deadLetteredSpansCounter,
  type AccountingRow,
  type SpanLogEventRow,
} from '@spanforge/ingest';
import { FairScheduler, WORKER_PARTICIPANT, clockBoundOf, scheduledClient, type ClickHouseClient } from '@spanforge/clickhouse';
import { CostReportService } from '@spanforge/cost-reports';
import { INGEST_QUEUE, type IngestJob, type QueueBackend } from '@spanforge/queue';
import {
  CLICKHOUSE,
  ClickHouseModule,
  CostReportsModule,
  PROCESS,
  Postgres,
  PostgresModule,
  QUEUES,
  QueueModule,
  TenancyModule,
  type ProcessContext,
} from '@spanforge/runtime';
import { DataPolicyRepository, ProjectPolicies, TenancyRepository } from '@spanforge/tenancy';
import { FailedJobsSweeper } from './ingest/failed-jobs.sweeper';
import { IngestProcessor } from './ingest/ingest.processor';
import { ProjectPricing } from './ingest/project-pricing';
import { ErasureRunner } from './retention/erasure.runner';
import { RetentionSweeper } from './retention/retention.sweeper';
import { startCostReportWorker } from './reports/cost-report.worker';

/**
 * Batch shape, chosen with `npm run bench:ingest` (BENCHMARKS.md). One insert at a time with group
 * commit: chDB runs one statement at a time per connection (measured), so a second insert in flight
 * only queues; what arrives during an insert goes out as the next batch, up to 10,000 rows (an
 * insert has a fixed cost of 60–100 ms here, its materialized views', so batches should be big).
 * When idle, a row waits at most 100 ms. (A second connection for the inserts, which chDB runs
 * beside the first's statements, was measured and dropped: on 2 cores it slowed the statements it
 * ran beside as much as it saved them waiting; BENCHMARKS.md, "Fairness", session 26.)
 */
export const SPAN_BATCH = { maxItems: 10_000, maxDelayMs: 100, maxConcurrentFlushes: 1 };
/**
 * Jobs in flight per worker process. A job stays in flight until its traces' upkeep is done, which
 * under load is one round behind the inserts; with 64 the jobs waiting for upkeep left too few to
 * fill the next insert (measured: 0.51–0.57 of the floor against 0.68–0.72). Memory stays small: a job's
 * rows are released once inserted.
 */
export const INGEST_CONCURRENCY = 256;

/** The worker's weight in the engine's time share (a project has 1). */
const WORKER_TIME_WEIGHT = 4;

/** The worker role: the ingest and cost-report queue consumers, the failed-jobs sweeper, the metrics sealer and the retention sweep. */
@Injectable()
export class Workers {
  constructor(
    @Inject(PROCESS) private readonly context: ProcessContext,
    @Inject(CLICKHOUSE) private readonly clickhouse: ClickHouseClient,
    private readonly querySlots: FairScheduler,
    @Inject(QUEUES) private readonly queues: QueueBackend,
    private readonly tenancy: TenancyRepository,
    private readonly policies: DataPolicyRepository,
    private readonly costReports: CostReportService,
    private readonly postgres: Postgres,
  ) {}

  /**
   * Starts the queue consumers of this process; returns the banner line. Shutdown: the queue backend
   * closes the BullMQ worker first (in-flight jobs finish, which needs their batch written), then the writers flush.
   */
  start(): Promise<string[]> {
    const { context, clickhouse, querySlots, queues, tenancy, policies, costReports, postgres } = this;
    return startWorkers({ ...context, clickhouse, querySlots, queues, tenancy, policies, costReports, postgres });
  }
}

/** What startWorkers uses: the process's pieces and the services Workers is given. */
type WorkerServices = ProcessContext & {
  clickhouse: ClickHouseClient;
  querySlots: FairScheduler;
  queues: QueueBackend;
  tenancy: TenancyRepository;
  policies: DataPolicyRepository;
  costReports: CostReportService;
  postgres: Postgres;
};

async function startWorkers(infra: WorkerServices): Promise<string[]> {
  // The worker's statements share the engine's time with the API's projects (all-in-one: one
  // embedded engine), with WORKER_TIME_WEIGHT times a project's share: its inserts serve every
  // project's ingest, and a flood of queries must not hold ingest back (libs/clickhouse fair-scheduler.ts).
  infra.querySlots.setWeight(WORKER_PARTICIPANT, WORKER_TIME_WEIGHT);
  infra.querySlots.keepOffExpress(WORKER_PARTICIPANT);
  const clickhouse = scheduledClient(infra.clickhouse, infra.querySlots, WORKER_PARTICIPANT);
  const clock = clockBoundOf(infra.clickhouse);
  const repository = new SpanRepository(clickhouse);
  const log = infra.log.child('worker');
  const deadLetters = new DeadLetterRepository(clickhouse);
  const deadLettered = deadLetteredSpansCounter(infra.metrics);
  const erasures = new ErasureRepository(clickhouse, infra.postgres.pool);
  const spans = new SpanWriter(repository, SPAN_BATCH, { deadLetters, erasures, log, registry: infra.metrics, deadLettered });
  const accounting = new BatchingQueue<AccountingRow>((rows) => repository.insertAccounting(rows), { maxItems: 5_000, maxDelayMs: 1_000 });
  const logEventStore = new SpanLogEventRepository(clickhouse);
  const logEvents = new BatchingQueue<SpanLogEventRow>((rows) => logEventStore.insert(rows), { maxItems: 5_000, maxDelayMs: 100 });
  const redactions = new Counter({
    name: 'spanforge_policy_redactions_total',
    help: "Values the projects' data policies redacted in stored spans (detectors and patterns)",
    registers: [infra.metrics],
  });
  const policies = new ProjectPolicies(infra.policies);
  const processor = new IngestProcessor({
    spans,
    logEvents,
    accounting,
    pricing: new ProjectPricing(infra.tenancy),
    policies,
    redacted: (values) => redactions.inc(values),
    deadLetters,
    log,
  });
  const sweeper = new FailedJobsSweeper({
    queue: infra.queues.queue<IngestJob>(INGEST_QUEUE),
    deadLetters,
    accounting: (rows) => repository.insertAccounting(rows),
    deadLettered,
    log,
    retentionOf: async (projectId) => (await policies.policyFor(projectId)).policy.retentionDays ?? 0,
    recheck: (job) => processor.recheck(job),
  });
  const jobs = new Counter({
    name: 'spanforge_worker_jobs_total',
    help: 'Ingest jobs finished by this worker, by outcome',
    labelNames: ['outcome'],
    registers: [infra.metrics],
  });
  const active = new Gauge({
    name: 'spanforge_worker_jobs_active',
    help: 'Ingest jobs this worker is processing now',
    registers: [infra.metrics],
  });
  // A consumer rather than a BullMQ Worker loop: jobs stay in flight until their batch is written, and
  // it keeps taking jobs meanwhile (libs/queue/src/job-consumer.ts).
  infra.queues.consumer<IngestJob>(
    INGEST_QUEUE,
    async (job: Job<IngestJob>) => {
      active.inc();
      try {
        const result = await processor.process(job);
        jobs.inc({ outcome: 'completed' });
        return result;
      } catch (error) {
        jobs.inc({ outcome: 'failed' });
        const attempts = job.opts.attempts ?? 1;
        const final = error instanceof UnrecoverableError || job.attemptsMade + 1 >= attempts;
        log.warn(
          `ingest job ${job.id} (${job.name}) failed on attempt ${job.attemptsMade + 1} of ${attempts}${final ? ', for good: it goes to the dead letters' : ', will retry'}: ${error instanceof Error ? error.message : String(error)}`,
        );
        if (final) setTimeout(() => void sweeper.sweepNow(), 100).unref();
        throw error;
      } finally {
        active.dec();
      }
    },
    // A crashed worker's jobs return to the queue once their 10 s lock lapses (renewed every 5 s while alive).
    {
      concurrency: INGEST_CONCURRENCY,
      lockDuration: 10_000,
      stalledInterval: 5_000,
      maxStalledCount: 5,
      onError: (message, error) => log.error(`ingest queue: ${message}`, error),
      // On a cluster, while this process's ClickHouse clock is not known to be within the bound it
      // can stamp nothing (libs/clickhouse/src/clock-bound.ts): its jobs are left to other workers.
      mayTake: clock ? () => clock.isWithin() : undefined,
    },
  );
  sweeper.start();
  // The minute rollup of span metrics (dashboards, span statistics), sealed once a minute is old enough.
  const sealer = new SpanMetricsSealer(clickhouse, log, infra.config.metricsSeal);
  sealer.start();
  await startCostReportWorker(infra.costReports, infra.queues, infra.log.child('cost-reports'), infra.metrics);
  // What of each project's retention storage does not do by itself: rows stored before it was set or shortened, stored cost reports.
  // Erasures (eraseData): each worker runs the jobs waiting, one at a time.
  const erasure = new ErasureRunner({
    claim: () => erasures.claim(),
    erase: (job) => erasures.erase(job),
    complete: (job) => erasures.complete(job),
    release: (job, error) => erasures.release(job, error),
    log,
  });
  erasure.start();
  const outlived = new RetentionRepository(clickhouse);
  const retention = new RetentionSweeper({
    projects: () => infra.policies.withRetention(),
    removeOutlived: (project) => outlived.removeOutlived(project, project.retentionDays),
    expireReports: () => infra.costReports.expireReports(),
    log,
  });
  retention.start();
  // Background upkeep stops first: the drain then has ClickHouse to itself (embedded, it runs one
  // statement at a time), and what it leaves undone is still due at the next start.
  infra.shutdown.add('stop-accepting', 'metrics sealer, retention and erasure', async () => {
    await Promise.all([sealer.stop(), retention.stop(), erasure.stop()]);
  });
  infra.shutdown.add('flush', 'span, log event and accounting writers', async () => {
    await sweeper.stop();
    await Promise.all([spans.close(), logEvents.close(), accounting.close()]);
  });
  return [`Workers    ${INGEST_CONCURRENCY} ingest jobs at a time from ${infra.queues.describe()}`];
}

/** The worker's services: ClickHouse, the queues, prices (tenancy) and cost reports. */
@Module({
  imports: [ClickHouseModule, PostgresModule, QueueModule, TenancyModule, CostReportsModule],
  providers: [Workers],
  exports: [Workers],
})
export class WorkerModule {}
