import { Counter, Gauge, type Registry } from 'prom-client';

/** Gateway counters, on the process registry (served at /metrics). */
export class GatewayMetrics {
  readonly requests: Counter<'transport' | 'status'>;
  readonly spans: Counter<'outcome'>;
  readonly logRecords: Counter<'outcome'>;
  readonly metricPoints: Counter;
  readonly quotaReads: Counter<'result'>;
  readonly queueDepth: Gauge;
  readonly queueActive: Gauge;

  constructor(registry: Registry, depth: () => number, active: () => number) {
    this.requests = new Counter({
      name: 'spanforge_gateway_requests_total',
      help: 'OTLP export requests by transport and answer (HTTP status or gRPC code name)',
      labelNames: ['transport', 'status'],
      registers: [registry],
    });
    this.spans = new Counter({
      name: 'spanforge_gateway_spans_total',
      help: 'Spans by what the gateway did with them: accepted (queued), rejected (invalid), rate_limited, quota (the tenant over its monthly quota)',
      labelNames: ['outcome'],
      registers: [registry],
    });
    this.logRecords = new Counter({
      name: 'spanforge_gateway_log_records_total',
      help: 'OTLP log records by what the gateway did with them: accepted (GenAI events of a span, queued), dropped (other records, counted and not stored), rate_limited, quota',
      labelNames: ['outcome'],
      registers: [registry],
    });
    this.metricPoints = new Counter({
      name: 'spanforge_gateway_metric_points_total',
      help: 'OTLP metric data points received: counted and not stored (answered as rejected in the partial success)',
      registers: [registry],
    });
    this.quotaReads = new Counter({
      name: 'spanforge_gateway_quota_reads_total',
      help: 'Reads of tenant quotas (PostgreSQL) and their month-to-date accepted spans (ClickHouse), every 10 s: ok, or failed (the last known figures stay in force)',
      labelNames: ['result'],
      registers: [registry],
    });
    this.queueDepth = new Gauge({
      name: 'spanforge_ingest_queue_depth',
      help: 'Ingest jobs waiting in the queue (as last polled)',
      registers: [registry],
      collect() {
        this.set(depth());
      },
    });
    this.queueActive = new Gauge({
      name: 'spanforge_ingest_queue_active',
      help: 'Ingest jobs held by workers (as last polled)',
      registers: [registry],
      collect() {
        this.set(active());
      },
    });
  }
}
