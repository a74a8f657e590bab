import { Inject, Injectable, Module } from '@nestjs/common';
import type { Queue } from 'bullmq';
import type { ClickHouseClient } from '@spanforge/clickhouse';
import { FeedbackService } from '@spanforge/feedback';
import { TenantUsageRepository } from '@spanforge/ingest';
import { INGEST_JOB_OPTIONS, INGEST_QUEUE, IngestJobName, type IngestJob, type QueueBackend } from '@spanforge/queue';
import {
  CLICKHOUSE,
  ClickHouseModule,
  FeedbackModule,
  PROCESS,
  QUEUES,
  QueueModule,
  TenancyModule,
  type ProcessContext,
} from '@spanforge/runtime';
import { Authenticator, TenancyRepository } from '@spanforge/tenancy';
import { BacklogMonitor } from './ingest/backlog.monitor';
import { BacklogShares } from './ingest/backlog-shares';
import { GatewayMetrics } from './ingest/gateway.metrics';
import { IngestService } from './ingest/ingest.service';
import { ProjectLimitsCache } from './ingest/project-limits.cache';
import { IngestRateLimiter } from './ingest/rate-limiter';
import { RefusalCounter } from './ingest/refusal.counter';
import { TenantQuotas } from './ingest/tenant-quotas';
import { startOtlpGrpcServer } from './otlp-grpc.server';
import { startOtlpHttpServer } from './otlp-http.server';

/** How often the gateway ships its refusal counters to the worker (accounting). */
const ACCOUNTING_FLUSH_MS = 5_000;

/** The gateway role: both OTLP receivers on one IngestService, which queues what it accepts. */
@Injectable()
export class Gateway {
  constructor(
    @Inject(PROCESS) private readonly context: ProcessContext,
    @Inject(QUEUES) private readonly queues: QueueBackend,
    @Inject(CLICKHOUSE) private readonly clickhouse: ClickHouseClient,
    private readonly tenancy: TenancyRepository,
    private readonly authenticator: Authenticator,
    private readonly feedback: FeedbackService,
  ) {}

  /** Starts listening; returns the banner lines. */
  async start(): Promise<string[]> {
    const { context } = this;
    const log = context.log.child('gateway');
    const queue = this.queues.queue<IngestJob>(INGEST_QUEUE) as Queue<IngestJob>;
    const backlog = new BacklogMonitor(queue, context.config.queueMaxBacklog, log);
    backlog.start();
    const refusals = new RefusalCounter();
    const metrics = new GatewayMetrics(
      context.metrics,
      () => backlog.depth,
      () => backlog.active,
    );
    const usage = new TenantUsageRepository(this.clickhouse);
    const quotas = new TenantQuotas(
      { quotas: () => this.tenancy.tenantQuotas(), acceptedSpans: (ids, fromMs, toMs) => usage.acceptedSpans(ids, fromMs, toMs) },
      log,
      (result) => metrics.quotaReads.inc({ result }),
    );
    quotas.start();
    const ingest = new IngestService({
      queue,
      limiter: new IngestRateLimiter(),
      limits: new ProjectLimitsCache(this.tenancy, log),
      backlog,
      shares: new BacklogShares(),
      refusals,
      quotas,
      metrics,
      log,
    });
    const flushRefusals = () =>
      refusals.flush(async (job) => {
        await queue.add(IngestJobName.Accounting, job, INGEST_JOB_OPTIONS);
      });
    // A flush that fails keeps its counts for the next one (RefusalCounter puts them back).
    const timer = setInterval(
      () =>
        flushRefusals().catch((error: Error) =>
          log.warn(`gateway accounting flush failed, retried in ${ACCOUNTING_FLUSH_MS / 1000} s: ${error.message}`),
        ),
      ACCOUNTING_FLUSH_MS,
    );
    timer.unref();

    const services = { ...context, authenticator: this.authenticator, feedback: this.feedback };
    const http = await startOtlpHttpServer(services, ingest, metrics);
    const grpc = await startOtlpGrpcServer(services, ingest, metrics);
    // Added after the listeners, so it runs after they stop and before the queues close: the last counts go out.
    context.shutdown.add('stop-accepting', 'gateway accounting', async () => {
      clearInterval(timer);
      backlog.stop();
      quotas.stop();
      await flushRefusals().catch((error: Error) => log.warn(`last accounting flush lost: ${error.message}`));
    });
    return [`OTLP/HTTP  ${http.url}/v1/traces`, `OTLP/gRPC  ${grpc.address}`];
  }
}

/**
 * The gateway's services: keys and tenant quotas (tenancy), the queue, ClickHouse (the tenants'
 * accepted spans, for quotas; never on the request path) and feedback for the Langfuse scores endpoint.
 */
@Module({ imports: [TenancyModule, QueueModule, ClickHouseModule, FeedbackModule], providers: [Gateway], exports: [Gateway] })
export class GatewayModule {}
