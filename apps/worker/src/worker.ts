import type { Job } from 'bullmq';
import { Counter, Gauge } from 'prom-client';
import { BatchingQueue, SpanRepository, SpanWriter, type AccountingRow } from '@spanforge/ingest';
import { INGEST_QUEUE, type IngestJob } from '@spanforge/queue';
import type { Infrastructure } from '@spanforge/runtime';
import { IngestProcessor } from './ingest/ingest.processor';
import { ProjectPricing } from './ingest/project-pricing';
import { startCostReportWorker } from './reports/cost-report.worker';

/**
 * Batch shape, chosen with `npm run bench:ingest` (BENCHMARKS.md): big enough that one insert
 * carries many exports, short enough that a job waits at most 100 ms for its batch; two batches
 * in flight let one's session attribution overlap the next one's insert.
 */
export const SPAN_BATCH = { maxItems: 10_000, maxDelayMs: 100, maxConcurrentFlushes: 2 };
/** Jobs in flight per worker process: they fill the shared batch while an insert runs. */
export const INGEST_CONCURRENCY = 64;

/**
 * Starts the queue consumers of this process. Shutdown: the queue backend closes the BullMQ
 * worker first (in-flight jobs finish, which needs their batch written), then the writers flush.
 */
export async function startWorkers(infra: Infrastructure): Promise<string[]> {
  const repository = new SpanRepository(infra.clickhouse);
  const spans = new SpanWriter(repository, SPAN_BATCH, infra.metrics);
  const accounting = new BatchingQueue<AccountingRow>((rows) => repository.insertAccounting(rows), { maxItems: 5_000, maxDelayMs: 1_000 });
  const processor = new IngestProcessor({ spans, accounting, pricing: new ProjectPricing(infra.tenancyRepository) });
  const jobs = new Counter({ name: 'spanforge_worker_jobs_total', help: 'Ingest jobs finished by this worker, by outcome', labelNames: ['outcome'], registers: [infra.metrics] });
  const active = new Gauge({ name: 'spanforge_worker_jobs_active', help: 'Ingest jobs this worker is processing now', registers: [infra.metrics] });
  infra.queues.worker<IngestJob>(
    INGEST_QUEUE,
    async (job: Job<IngestJob>) => {
      active.inc();
      try {
        const result = await processor.process(job);
        jobs.inc({ outcome: 'completed' });
        return result;
      } catch (error) {
        jobs.inc({ outcome: 'failed' });
        throw error;
      } finally {
        active.dec();
      }
    },
    // A crashed worker's jobs return to the queue once their 10 s lock lapses (renewed every 5 s while alive).
    { concurrency: INGEST_CONCURRENCY, lockDuration: 10_000, stalledInterval: 5_000, maxStalledCount: 5 },
  );
  await startCostReportWorker(infra);
  infra.shutdown.add('flush', 'span and accounting writers', async () => {
    await Promise.all([spans.close(), accounting.close()]);
  });
  return [`Workers    ${INGEST_CONCURRENCY} ingest jobs at a time from ${infra.services.queue}`];
}
