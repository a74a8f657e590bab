import type { AttributeValue, Attributes, DecodedSpan } from '@spanforge/otlp';
import { SpanKind, StatusCode } from '@spanforge/otlp';
import type { NormalizedSpan } from '@spanforge/semconv';

/** One row of the `spans` table (infra/clickhouse/002_spans.sql), as sent with JSONEachRow. */
export interface SpanRow {
  tenant_id: string;
  project_id: string;
  trace_id: string;
  span_id: string;
  parent_span_id: string;
  trace_state: string;
  flags: number;
  name: string;
  kind: string;
  service_name: string;
  scope_name: string;
  scope_version: string;
  start_time: string;
  end_time: string;
  duration_ns: string;
  status_code: string;
  status_message: string;
  span_type: string;
  convention: string;
  operation: string;
  session_id: string;
  user_id: string;
  run_id: string;
  agent_name: string;
  tool_name: string;
  model: string;
  model_requested: string;
  provider: string;
  tokens_input_uncached: number;
  tokens_cache_read: number;
  tokens_cache_write: number;
  tokens_output: number;
  tokens_reasoning: number;
  usage_is_aggregate: number;
  cost_usd: number;
  cost_source: string;
  price_version: string;
  ttft_ms: number | null;
  error_type: string;
  iterations: number;
  attributes: Record<string, string>;
  attribute_json_keys: string[];
  resource_attributes: Record<string, string>;
  'events.time': string[];
  'events.name': string[];
  'events.attributes': Array<Record<string, string>>;
  'links.trace_id': string[];
  'links.span_id': string[];
  'links.trace_state': string[];
  'links.attributes': Array<Record<string, string>>;
  input: string;
  output: string;
  dropped_attributes_count: number;
  dropped_events_count: number;
  dropped_links_count: number;
  truncated: number;
  /** Values the project's data policy redacted in this span (detectors and patterns). */
  redactions: number;
  /** The project's retention when the row was written (0: kept until erased); storage drops it by it. */
  retention_days: number;
}

export interface SpanPrice {
  costUsd: number;
  costSource: string;
  priceVersion: string;
}

const NS_PER_S = 1_000_000_000n;

/**
 * Nanoseconds since the epoch as `seconds.nanoseconds`, which DateTime64(9) parses exactly. The
 * seconds are padded to ten digits: with fewer than nine, ClickHouse reads the digits as a date
 * (YYYYMMDD…) and refuses the row — every time before 1973-03-03 did.
 */
export function nanosToDateTime64(nanos: bigint): string {
  const seconds = nanos / NS_PER_S;
  const fraction = nanos % NS_PER_S;
  return `${seconds.toString().padStart(10, '0')}.${fraction.toString().padStart(9, '0')}`;
}

const NS_PER_MS = 1_000_000n;

const DAY_MS = 86_400_000;

/**
 * The spans table's partition of a row, as its partition key computes it
 * (016_retention_partitions.sql): a kept row (retention 0) is filed under its start month
 * (toYYYYMM, e.g. 202612), a row under a retention under the Monday of the week it expires in
 * (toYYYYMMDD, e.g. 20270104).
 */
export function spanPartition(startTimeUnixNano: bigint, retentionDays: number): number {
  const start = new Date(Number(startTimeUnixNano / NS_PER_MS));
  if (retentionDays === 0) return start.getUTCFullYear() * 100 + start.getUTCMonth() + 1;
  const expiryDay = Date.UTC(start.getUTCFullYear(), start.getUTCMonth(), start.getUTCDate()) + retentionDays * DAY_MS;
  const monday = new Date(expiryDay - ((new Date(expiryDay).getUTCDay() + 6) % 7) * DAY_MS);
  return monday.getUTCFullYear() * 10_000 + (monday.getUTCMonth() + 1) * 100 + monday.getUTCDate();
}

/** Strings stay as they are; other values are stored as JSON and their keys listed (see 002_spans.sql). */
export function flattenAttributes(attributes: Attributes): { values: Record<string, string>; jsonKeys: string[] } {
  const values: Record<string, string> = {};
  const jsonKeys: string[] = [];
  for (const key in attributes) {
    const value = attributes[key] as AttributeValue;
    if (typeof value === 'string') values[key] = value;
    else {
      values[key] = stringifyValue(value);
      jsonKeys.push(key);
    }
  }
  return { values, jsonKeys };
}

/** For maps that need no types back (resource, events, links): everything as text. */
export function stringMap(attributes: Attributes): Record<string, string> {
  const values: Record<string, string> = {};
  for (const key in attributes) {
    const value = attributes[key] as AttributeValue;
    values[key] = typeof value === 'string' ? value : stringifyValue(value);
  }
  return values;
}

function stringifyValue(value: AttributeValue): string {
  // JSON has no NaN/Infinity; they are kept as their names.
  if (typeof value === 'number' && !Number.isFinite(value)) return String(value);
  return JSON.stringify(value);
}

const KIND_NAMES: Record<number, string> = {
  [SpanKind.UNSPECIFIED]: 'UNSPECIFIED',
  [SpanKind.INTERNAL]: 'INTERNAL',
  [SpanKind.SERVER]: 'SERVER',
  [SpanKind.CLIENT]: 'CLIENT',
  [SpanKind.PRODUCER]: 'PRODUCER',
  [SpanKind.CONSUMER]: 'CONSUMER',
};
const STATUS_NAMES: Record<number, string> = { [StatusCode.UNSET]: 'UNSET', [StatusCode.OK]: 'OK', [StatusCode.ERROR]: 'ERROR' };

export function toSpanRow(tenantId: string, projectId: string, span: DecodedSpan, normalized: NormalizedSpan, price: SpanPrice): SpanRow {
  const { values, jsonKeys } = flattenAttributes(normalized.attributes);
  const usage = normalized.usage;
  const serviceName = span.resource.attributes['service.name'];
  return {
    tenant_id: tenantId,
    project_id: projectId,
    trace_id: span.traceId,
    span_id: span.spanId,
    parent_span_id: span.parentSpanId,
    trace_state: span.traceState,
    flags: span.flags,
    name: span.name,
    kind: KIND_NAMES[span.kind] ?? 'UNSPECIFIED',
    service_name: typeof serviceName === 'string' ? serviceName : '',
    scope_name: span.scope.name,
    scope_version: span.scope.version,
    start_time: nanosToDateTime64(span.startTimeUnixNano),
    end_time: nanosToDateTime64(span.endTimeUnixNano),
    duration_ns: (span.endTimeUnixNano - span.startTimeUnixNano).toString(),
    status_code: STATUS_NAMES[span.statusCode] ?? 'UNSET',
    status_message: span.statusMessage,
    span_type: normalized.spanType,
    convention: normalized.convention,
    operation: normalized.operation,
    session_id: normalized.sessionId,
    user_id: normalized.userId,
    run_id: normalized.runId,
    agent_name: normalized.agentName,
    tool_name: normalized.toolName,
    model: normalized.model,
    model_requested: normalized.modelRequested,
    provider: normalized.provider,
    tokens_input_uncached: usage.inputUncached,
    tokens_cache_read: usage.cacheRead,
    tokens_cache_write: usage.cacheWrite,
    tokens_output: usage.output,
    tokens_reasoning: usage.reasoning,
    usage_is_aggregate: normalized.usageIsAggregate ? 1 : 0,
    cost_usd: price.costUsd,
    cost_source: price.costSource,
    price_version: price.priceVersion,
    ttft_ms: normalized.ttftMs ?? null,
    error_type: normalized.errorType,
    iterations: normalized.iterations ?? -1,
    attributes: values,
    attribute_json_keys: jsonKeys,
    resource_attributes: stringMap(span.resource.attributes),
    'events.time': span.events.map((e) => nanosToDateTime64(e.timeUnixNano)),
    'events.name': span.events.map((e) => e.name),
    'events.attributes': span.events.map((e) => stringMap(e.attributes)),
    'links.trace_id': span.links.map((l) => l.traceId),
    'links.span_id': span.links.map((l) => l.spanId),
    'links.trace_state': span.links.map((l) => l.traceState),
    'links.attributes': span.links.map((l) => stringMap(l.attributes)),
    input: normalized.input,
    output: normalized.output,
    dropped_attributes_count: span.droppedAttributesCount,
    dropped_events_count: span.droppedEventsCount,
    dropped_links_count: span.droppedLinksCount,
    truncated: span.truncated ? 1 : 0,
    redactions: 0,
    retention_days: 0,
  };
}
