import type { TraceFiguresRow } from '@spanforge/clickhouse';
import { displayedSpanType, figuresShowGenAi, isoOf, msOf, spanCursor, usd, type SpanRecord } from '@spanforge/query';
import { CostSource, SpanKind, SpanType, StatusCode, type Span, type Trace } from './query.model';

const COST_SOURCES: Record<string, CostSource> = {
  explicit: CostSource.EXPLICIT,
  price_table: CostSource.PRICE_TABLE,
  override: CostSource.OVERRIDE,
  none: CostSource.UNPRICED,
};

/** What a Trace's field resolvers need but GraphQL does not show. */
export interface TraceSource extends Trace {
  bounds: { start: string; end: string };
  rootSpanId: string;
  /** Its figures show it is a GenAI trace (TraceService's rule); a read of its spans may show it too. */
  genAi: boolean;
  /** The query asks for loopSuspected or findings: the analysis then reads the tool calls' arguments. */
  loopsAsked: boolean;
}

export function toTrace(row: TraceFiguresRow, loopsAsked = false): TraceSource {
  return {
    traceId: row.trace_id,
    sessionId: row.session_id || null,
    userId: row.user_id || null,
    rootName: row.root_name || null,
    startTime: isoOf(row.start_time),
    durationMs: Number(row.duration_ms),
    iterations: Number(row.iterations),
    costUsd: usd(row.cost_usd),
    inputTokens: Number(row.input_tokens),
    outputTokens: Number(row.output_tokens),
    errorCount: Number(row.error_count),
    llmCalls: Number(row.llm_calls),
    models: [...row.models].sort(),
    toolsUsed: [...row.tools_used].sort(),
    feedback: [],
    bounds: { start: row.start_time, end: row.end_time },
    rootSpanId: row.root_span_id,
    genAi: figuresShowGenAi(row),
    loopsAsked,
  };
}

/** A stored span as GraphQL shows it, typed as TraceService says (the root of a GenAI trace is RUN). */
export function toSpan(record: SpanRecord, genAiTrace: boolean): Span {
  const isRoot = record.parent_span_id === '';
  const aggregate = Number(record.usage_is_aggregate) === 1;
  return {
    spanId: record.span_id,
    parentSpanId: isRoot ? null : record.parent_span_id,
    name: record.name,
    type: displayedSpanType(record, genAiTrace) as SpanType,
    startTime: isoOf(record.start_time),
    endTime: isoOf(record.end_time),
    durationMs: Number(record.duration_ns) / 1e6,
    statusCode: record.status_code as StatusCode,
    statusMessage: record.status_message || null,
    kind: record.kind as SpanKind,
    model: record.model || null,
    // A span that only repeats its children's usage (an agent's or a wrapper's totals) owns none of
    // it: its own figures are 0, so a trace's spans add up to the trace; what it stated is kept apart.
    inputTokens: aggregate ? 0 : Number(record.input_tokens),
    outputTokens: aggregate ? 0 : Number(record.output_tokens),
    costUsd: aggregate ? 0 : usd(record.cost_usd),
    costSource: aggregate ? null : (COST_SOURCES[record.cost_source] ?? null),
    statedInputTokens: aggregate ? Number(record.input_tokens) : null,
    statedOutputTokens: aggregate ? Number(record.output_tokens) : null,
    statedCostUsd: aggregate ? usd(record.cost_usd) : null,
    attributes: record.attributes ? typedAttributes(record.attributes, record.attribute_json_keys ?? []) : null,
    cursor: spanCursor(record),
  };
}

/** Stored attribute text back to its JSON type (keys listed in attribute_json_keys hold JSON). */
export function typedAttributes(values: Record<string, string>, jsonKeys: string[]): Record<string, unknown> {
  const json = new Set(jsonKeys);
  const typed: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(values)) {
    if (!json.has(key)) typed[key] = value;
    else {
      try {
        typed[key] = JSON.parse(value);
      } catch {
        // NaN and ±Infinity are stored by name; GraphQL JSON cannot carry them as numbers.
        typed[key] = value;
      }
    }
  }
  return typed;
}

export { msOf };
