import type { Job } from 'bullmq';
import { BatchingQueue, SpanRepository, SpanWriter, type AccountingRow } from '@spanforge/ingest';
import { INGEST_QUEUE, type IngestJob } from '@spanforge/queue';
import type { Infrastructure } from '@spanforge/runtime';
import { IngestProcessor } from './ingest/ingest.processor';
import { ProjectPricing } from './ingest/project-pricing';

/**
 * Batch shape, chosen with `npm run bench:ingest` (BENCHMARKS.md): big enough that one insert
 * carries many exports, short enough that a job waits at most a quarter second for its batch.
 */
export const SPAN_BATCH = { maxItems: 10_000, maxDelayMs: 250 };
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
  infra.queues.worker<IngestJob>(INGEST_QUEUE, (job: Job<IngestJob>) => processor.process(job), { concurrency: INGEST_CONCURRENCY });
  infra.shutdown.add('flush', 'span and accounting writers', async () => {
    await Promise.all([spans.close(), accounting.close()]);
  });
  return [`Workers    ${INGEST_CONCURRENCY} ingest jobs at a time from ${infra.services.queue}`];
}
