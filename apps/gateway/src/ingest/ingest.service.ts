import { randomUUID } from 'node:crypto';
import type { Queue } from 'bullmq';
import {
  OtlpDecodeError,
  countJsonMetricPoints,
  countProtobufMetricPoints,
  decodeJsonExport,
  decodeJsonLogs,
  decodeProtobufExport,
  decodeProtobufLogs,
  describeDroppedLogs,
  describeDroppedMetricPoints,
  describeRejections,
  type OtlpSignal,
} from '@spanforge/otlp';
import { INGEST_JOB_OPTIONS, IngestJobName, packExportBody, type ExportJob, type IngestJob } from '@spanforge/queue';
import { ThrottledWarning, reasonOf, type ErrorLog } from '@spanforge/postgres';
import type { ProjectScope } from '@spanforge/tenancy';
import type { BacklogMonitor } from './backlog.monitor';
import type { BacklogShares } from './backlog-shares';
import type { GatewayMetrics } from './gateway.metrics';
import type { ProjectLimitsCache } from './project-limits.cache';
import type { IngestLimits, IngestRateLimiter } from './rate-limiter';
import type { RefusalCounter } from './refusal.counter';
import type { TenantQuotas } from './tenant-quotas';

export type OtlpFormat = 'protobuf' | 'json';

/** What the gateway answers an export, whatever the transport. */
export type IngestDecision =
  | { outcome: 'accepted'; rejected: number; message: string }
  | { outcome: 'invalid'; message: string }
  | { outcome: 'rate_limited'; retryAfterSeconds: number; message: string }
  | { outcome: 'unavailable'; retryAfterSeconds: number; message: string };

/** How long an enqueue may take before the gateway gives up and answers 503. */
const ENQUEUE_TIMEOUT_MS = 5_000;
/** Retry-After when the queue is full or away: long enough for a worker to drain some of it. */
const UNAVAILABLE_RETRY_AFTER_S = 5;

export interface IngestServiceDeps {
  queue: Queue<IngestJob>;
  limiter: IngestRateLimiter;
  limits: ProjectLimitsCache;
  backlog: BacklogMonitor;
  /** Each project's share of the queue, for fairness when it is deep. */
  shares: BacklogShares;
  refusals: RefusalCounter;
  /** Tenants' monthly span quotas: checked after decoding, fed with what is queued. */
  quotas: Pick<TenantQuotas, 'check' | 'record'>;
  metrics: GatewayMetrics;
  log: Pick<ErrorLog, 'warn'>;
}

/**
 * The gateway's decision for one export: refuse a project already over its rate, decode and
 * validate (so the answer can count rejected spans), apply the tenant's monthly quota
 * (tenant-quotas.ts), the project's rate limits and its share of the queue (backlog-shares.ts),
 * then hand the body to the queue. `accepted` is returned only after the queue has the job: a
 * 200 means durably queued.
 */
export class IngestService {
  /** While the queue is away every export fails the same way: its reason is logged, at most every 10 s. */
  private readonly enqueueFailed: ThrottledWarning;

  constructor(private readonly deps: IngestServiceDeps) {
    this.enqueueFailed = new ThrottledWarning(deps.log);
  }

  /** One export of any signal, by the path or service it came to. */
  take(signal: OtlpSignal, scope: ProjectScope, format: OtlpFormat, body: Buffer): Promise<IngestDecision> {
    if (signal === 'logs') return this.ingestLogs(scope, format, body);
    if (signal === 'metrics') return this.countMetrics(scope, format, body);
    return this.ingest(scope, format, body);
  }

  async ingest(scope: ProjectScope, format: OtlpFormat, body: Buffer): Promise<IngestDecision> {
    const { refusals, metrics } = this.deps;
    const decoded = await this.decode(scope, body, () =>
      format === 'protobuf' ? decodeProtobufExport(body) : decodeJsonExport(body.toString('utf8')),
    );
    if ('refusal' in decoded) return decoded.refusal;
    const { result, limits } = decoded;

    const overQuota = this.overQuota(scope, result.received, body.length, limits);
    if (overQuota) {
      metrics.spans.inc({ outcome: 'quota' }, result.received);
      return overQuota;
    }
    const wait = this.deps.limiter.take(scope.projectId, result.received, body.length, limits);
    if (wait > 0) {
      refusals.count(scope.tenantId, scope.projectId, 'rate_limited', '', result.received, body.length);
      metrics.spans.inc({ outcome: 'rate_limited' }, result.received);
      return { outcome: 'rate_limited', retryAfterSeconds: wait, message: overRate(limits) };
    }

    const message = result.rejected > 0 ? describeRejections(result) : '';
    metrics.spans.inc({ outcome: 'rejected' }, result.rejected);
    if (result.spans.length === 0) {
      // Nothing to store: account here, since no export job will.
      refusals.count(scope.tenantId, scope.projectId, 'received', '', result.received, body.length);
      for (const [reason, spans] of Object.entries(result.rejectReasons))
        refusals.count(scope.tenantId, scope.projectId, 'rejected', reason, spans ?? 0, 0);
      return { outcome: 'accepted', rejected: result.rejected, message };
    }

    const queued = await this.enqueue(scope, format, body, { receivedSpans: result.received, acceptedSpans: result.spans.length });
    if (queued) return queued;
    this.deps.quotas.record(scope.tenantId, result.spans.length);
    metrics.spans.inc({ outcome: 'accepted' }, result.spans.length);
    return { outcome: 'accepted', rejected: result.rejected, message };
  }

  /**
   * An OTLP logs export: its GenAI events (gen_ai.* events with a trace and span id) are queued for
   * their spans like spans are, under the same rate and queue share; every other record is counted
   * and reported as not stored in the partial success.
   */
  async ingestLogs(scope: ProjectScope, format: OtlpFormat, body: Buffer): Promise<IngestDecision> {
    const { refusals, metrics } = this.deps;
    const decoded = await this.decode(scope, body, () => (format === 'protobuf' ? decodeProtobufLogs(body) : decodeJsonLogs(body)));
    if ('refusal' in decoded) return decoded.refusal;
    const { result, limits } = decoded;
    // GenAI events belong to spans, which a tenant over its quota no longer stores.
    const overQuota = this.overQuota(scope, 0, body.length, limits);
    if (overQuota) {
      metrics.logRecords.inc({ outcome: 'quota' }, result.received);
      return overQuota;
    }
    // A kept event weighs like a span against the project's rate; dropped records cost only bytes.
    const wait = this.deps.limiter.take(scope.projectId, result.events.length, body.length, limits);
    if (wait > 0) {
      refusals.count(scope.tenantId, scope.projectId, 'rate_limited', '', 0, body.length);
      metrics.logRecords.inc({ outcome: 'rate_limited' }, result.received);
      return { outcome: 'rate_limited', retryAfterSeconds: wait, message: overRate(limits) };
    }
    const message = result.dropped > 0 ? describeDroppedLogs(result) : '';
    metrics.logRecords.inc({ outcome: 'dropped' }, result.dropped);
    if (result.events.length > 0) {
      const queued = await this.enqueue(scope, format, body, { receivedSpans: 0, acceptedSpans: 0, signal: 'logs' });
      if (queued) return queued;
      metrics.logRecords.inc({ outcome: 'accepted' }, result.events.length);
    }
    return { outcome: 'accepted', rejected: result.dropped, message };
  }

  /** An OTLP metrics export: its data points are counted and answered as not stored (metrics.counter.ts). */
  async countMetrics(scope: ProjectScope, format: OtlpFormat, body: Buffer): Promise<IngestDecision> {
    const { refusals, metrics } = this.deps;
    const limits = await this.deps.limits.get(scope.projectId);
    const wait = this.deps.limiter.take(scope.projectId, 0, body.length, limits);
    if (wait > 0) {
      refusals.count(scope.tenantId, scope.projectId, 'rate_limited', 'metrics', 0, body.length);
      return { outcome: 'rate_limited', retryAfterSeconds: wait, message: overRate(limits) };
    }
    let points: number;
    try {
      points = format === 'protobuf' ? countProtobufMetricPoints(body) : countJsonMetricPoints(body);
    } catch (error) {
      if (!(error instanceof OtlpDecodeError)) throw error;
      return { outcome: 'invalid', message: error.message };
    }
    metrics.metricPoints.inc(points);
    return { outcome: 'accepted', rejected: points, message: points > 0 ? describeDroppedMetricPoints(points) : '' };
  }

  /**
   * The project's limits, then the body decoded: a project already over its rate is refused before
   * its body is decoded (a flood costs the gateway one bucket check an export, not a decode; its
   * spans are not counted, only bytes), and a body that cannot be decoded is refused as invalid.
   */
  private async decode<T>(
    scope: ProjectScope,
    body: Buffer,
    decode: () => T,
  ): Promise<{ result: T; limits: IngestLimits } | { refusal: IngestDecision }> {
    const { refusals } = this.deps;
    const limits = await this.deps.limits.get(scope.projectId);
    const early = this.deps.limiter.precheck(scope.projectId, body.length, limits);
    if (early > 0) {
      refusals.count(scope.tenantId, scope.projectId, 'rate_limited', 'before_decode', 0, body.length);
      return { refusal: { outcome: 'rate_limited', retryAfterSeconds: early, message: overRate(limits) } };
    }
    try {
      return { result: decode(), limits };
    } catch (error) {
      if (!(error instanceof OtlpDecodeError)) throw error;
      refusals.count(scope.tenantId, scope.projectId, 'refused', 'invalid_body', 0, body.length);
      return { refusal: { outcome: 'invalid', message: error.message } };
    }
  }

  /**
   * The refusal of an export whose tenant is over its monthly quota, accounted as `refused` /
   * `quota`; undefined when it may go on. The refused export still takes from the project's rate
   * buckets, so a tenant that keeps sending past its quota costs no more decoding than its rate
   * allows (beyond it, exports are refused before decoding, as rate-limited).
   */
  private overQuota(scope: ProjectScope, spans: number, bytes: number, limits: IngestLimits): IngestDecision | undefined {
    const verdict = this.deps.quotas.check(scope.tenantId);
    if (verdict.retryAfterSeconds === 0) return undefined;
    this.deps.limiter.take(scope.projectId, spans, bytes, limits);
    this.deps.refusals.count(scope.tenantId, scope.projectId, 'refused', 'quota', spans, bytes);
    return {
      outcome: 'rate_limited',
      retryAfterSeconds: verdict.retryAfterSeconds,
      message: `tenant over its monthly quota of ${verdict.limit} accepted spans (calendar month, UTC): exports are refused until the quota is raised or the month ends`,
    };
  }

  /**
   * Hands an export to the queue within the project's share of it; undefined once queued, else the
   * refusal to answer. Accounts the refusal (the export job accounts the rest).
   */
  private async enqueue(
    scope: ProjectScope,
    format: OtlpFormat,
    body: Buffer,
    counts: Pick<ExportJob, 'receivedSpans' | 'acceptedSpans' | 'signal'>,
  ): Promise<IngestDecision | undefined> {
    const { refusals, metrics } = this.deps;
    const verdict = this.deps.shares.verdict(scope.projectId, this.deps.backlog.depth, this.deps.backlog.cap);
    if (!verdict.admit && verdict.reason === 'over_share') {
      refusals.count(scope.tenantId, scope.projectId, 'rate_limited', 'queue_share', counts.receivedSpans, body.length);
      metrics.spans.inc({ outcome: 'rate_limited' }, counts.receivedSpans);
      return {
        outcome: 'rate_limited',
        retryAfterSeconds: UNAVAILABLE_RETRY_AFTER_S,
        message: "project over its fair share of the ingest queue (it holds most of the queue's backlog); retry later",
      };
    }
    if (!verdict.admit) {
      refusals.count(scope.tenantId, scope.projectId, 'refused', 'queue_full', counts.receivedSpans, body.length);
      return { outcome: 'unavailable', retryAfterSeconds: UNAVAILABLE_RETRY_AFTER_S, message: 'ingest queue is full; retry later' };
    }
    const job: ExportJob = {
      v: 1,
      tenantId: scope.tenantId,
      projectId: scope.projectId,
      format,
      ...packExportBody(body),
      receivedAt: Date.now(),
      exportId: randomUUID(),
      ...counts,
      bytes: body.length,
    };
    try {
      await withTimeout(this.deps.queue.add(IngestJobName.Export, job, INGEST_JOB_OPTIONS), ENQUEUE_TIMEOUT_MS);
    } catch (error) {
      this.enqueueFailed.warn(`ingest queue did not take an export (answered 503, accounted as queue_unavailable): ${reasonOf(error)}`);
      refusals.count(scope.tenantId, scope.projectId, 'refused', 'queue_unavailable', counts.receivedSpans, body.length);
      return { outcome: 'unavailable', retryAfterSeconds: UNAVAILABLE_RETRY_AFTER_S, message: 'ingest queue unavailable; retry later' };
    }
    this.deps.shares.record(scope.projectId);
    return undefined;
  }
}

function overRate(limits: { spansPerSecond: number; bytesPerSecond: number }): string {
  return `project over its ingest rate (${limits.spansPerSecond} spans/s, ${limits.bytesPerSecond} bytes/s)`;
}

function withTimeout<T>(promise: Promise<T>, ms: number): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  return Promise.race([
    promise,
    new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new Error(`no answer in ${ms} ms`)), ms);
    }),
  ]).finally(() => clearTimeout(timer));
}
