import type { Queue } from 'bullmq';
import { INGEST_JOB_OPTIONS, INGEST_QUEUE, IngestJobName, type IngestJob } from '@spanforge/queue';
import type { Infrastructure } from '@spanforge/runtime';
import { BacklogMonitor } from './ingest/backlog.monitor';
import { BacklogShares } from './ingest/backlog-shares';
import { GatewayMetrics } from './ingest/gateway.metrics';
import { IngestService } from './ingest/ingest.service';
import { ProjectLimitsCache } from './ingest/project-limits.cache';
import { IngestRateLimiter } from './ingest/rate-limiter';
import { RefusalCounter } from './ingest/refusal.counter';
import { startOtlpGrpcServer } from './otlp-grpc.server';
import { startOtlpHttpServer } from './otlp-http.server';

/** How often the gateway ships its refusal counters to the worker (accounting). */
const ACCOUNTING_FLUSH_MS = 5_000;

/** Starts both OTLP receivers on one IngestService; returns the banner lines. */
export async function startGateway(infra: Infrastructure): Promise<string[]> {
  const queue = infra.queues.queue<IngestJob>(INGEST_QUEUE) as Queue<IngestJob>;
  const backlog = new BacklogMonitor(queue, infra.config.queueMaxBacklog, infra.log.child('gateway'));
  backlog.start();
  const refusals = new RefusalCounter();
  const metrics = new GatewayMetrics(
    infra.metrics,
    () => backlog.depth,
    () => backlog.active,
  );
  const ingest = new IngestService({
    queue,
    limiter: new IngestRateLimiter(),
    limits: new ProjectLimitsCache(infra.tenancyRepository, infra.log.child('gateway')),
    backlog,
    shares: new BacklogShares(),
    refusals,
    metrics,
    log: infra.log.child('gateway'),
  });
  const flushRefusals = () =>
    refusals.flush(async (job) => {
      await queue.add(IngestJobName.Accounting, job, INGEST_JOB_OPTIONS);
    });
  // A flush that fails keeps its counts for the next one (RefusalCounter puts them back).
  const timer = setInterval(
    () =>
      flushRefusals().catch((error: Error) =>
        infra.log.warn(`gateway accounting flush failed, retried in ${ACCOUNTING_FLUSH_MS / 1000} s: ${error.message}`),
      ),
    ACCOUNTING_FLUSH_MS,
  );
  timer.unref();

  const http = await startOtlpHttpServer(infra, ingest, metrics);
  const grpc = await startOtlpGrpcServer(infra, ingest, metrics);
  // Added after the listeners, so it runs after they stop and before the queues close: the last counts go out.
  infra.shutdown.add('stop-accepting', 'gateway accounting', async () => {
    clearInterval(timer);
    backlog.stop();
    await flushRefusals().catch((error: Error) => infra.log.warn(`last accounting flush lost: ${error.message}`));
  });
  return [`OTLP/HTTP  ${http.url}/v1/traces`, `OTLP/gRPC  ${grpc.address}`];
}
