import type { ScopedClickHouse } from './scoped-clickhouse';
import { newestTracesFiled, traceFilterSql, type TraceFilter } from './trace-filter';
import { traceFiguresSql, type TraceFiguresRow } from '@spanforge/clickhouse';

export interface SpanRecord {
  span_id: string;
  parent_span_id: string;
  name: string;
  span_type: string;
  start_time: string;
  end_time: string;
  duration_ns: number;
  status_code: 'UNSET' | 'OK' | 'ERROR';
  status_message: string;
  kind: string;
  model: string;
  input_tokens: number;
  output_tokens: number;
  cost_usd: number;
  /** '' (nothing to price), 'explicit', 'price_table', 'override' or 'none' (no price for the model). */
  cost_source: string;
  usage_is_aggregate: number;
  tool_name: string;
  /** Nanoseconds since the epoch, as text (exact). */
  start_ns: string;
  end_ns: string;
  attributes?: Record<string, string>;
  attribute_json_keys?: string[];
}

/**
 * The most spans one read of a trace returns. A trace is one tenant's to make as large as it likes
 * (an agent looping for hours can send millions of spans), while a read's rows are all held in the
 * API's memory, turned into GraphQL objects and JSON, and several requests may read the same trace
 * at once: without a cap, a few requests for one huge trace could exhaust the API process. 10,000
 * is more than the waterfall draws (it collapses beyond 2,000 rows) and holds the bench's large
 * trace whole (bench/query.bench.ts); the rest of a larger trace is read page by page (`after`).
 */
export const MAX_SPANS_PER_READ = 10_000;

/**
 * The windows (minutes before the newest) a page with no start of range is read from, in turn,
 * before the whole project: each 24 times the last, so a project with a page of traces in the
 * last 5 minutes, 2 hours or 2 days reads those minutes, and one whose page is older (or whose
 * filter matches few traces) pays three small reads more than the whole project's.
 */
const NEWEST_WINDOWS_MINUTES = [5, 120, 2_880];

/** Where a page of a trace's spans starts: after this span, in (start time, span id) order. */
export interface SpanCursor {
  /** Nanoseconds since the epoch, as text (exact). */
  startNs: string;
  spanId: string;
}

export interface SpanContent {
  span_id: string;
  attributes: Record<string, string>;
  attribute_json_keys: string[];
  resource_attributes: Record<string, string>;
  input: string;
  output: string;
  events_name: string[];
  events_time: string[];
  events_attributes: Array<Record<string, string>>;
}

/** One GenAI event sent as a log record (infra/clickhouse/011_span_log_events.sql). */
export interface SpanLogEvent {
  time: string;
  name: string;
  attributes: Record<string, string>;
  /** A JSON array of messages, or ''. */
  input: string;
  output: string;
}

/** A call's events are a handful (one per message); this bounds what one span read can pull in. */
export const MAX_LOG_EVENTS_PER_SPAN = 1_024;

/** All SQL behind `trace` and `traces`. */
export class TraceRepository {
  constructor(private readonly db: ScopedClickHouse) {}

  /** The time bounds of one trace (trace_index is keyed by trace id: a point lookup). */
  async bounds(traceId: string): Promise<{ start_time: string; end_time: string } | undefined> {
    const [row] = await this.db.rows<{ start_time: string; end_time: string; n: number }>(
      'query.trace_bounds',
      `SELECT min(start_time) AS start_time, max(end_time) AS end_time, count() AS n FROM trace_index
       WHERE tenant_id = {tenantId:String} AND project_id = {projectId:String} AND trace_id = {traceId:String}`,
      { traceId },
    );
    return row && row.n > 0 ? row : undefined;
  }

  async figures(traceId: string, startTime: string, endTime: string): Promise<TraceFiguresRow | undefined> {
    const [row] = await this.db.rows<TraceFiguresRow>(
      'query.trace_figures',
      traceFiguresSql(
        ` AND day BETWEEN toDate({from:DateTime64(9, 'UTC')}) AND toDate({to:DateTime64(9, 'UTC')}) AND trace_id = {traceId:String}`,
      ),
      { traceId, from: startTime, to: endTime },
    );
    return row;
  }

  /**
   * The figures of one trace as last recomputed by the worker (a point lookup on trace_figures'
   * key; the newest computation without FINAL). Undefined until the first recomputation: callers
   * then read the rollup (figures()).
   */
  async latestFigures(traceId: string): Promise<TraceFiguresRow | undefined> {
    const [row] = await this.db.rows<TraceFiguresRow>(
      'query.trace_latest_figures',
      `SELECT trace_id, start_time, end_time, '' AS root_span_id, root_name, '' AS root_type, session_id, user_id, run_id, service_name,
              models, tools_used, [] AS span_types, [] AS llm_spans, toString(toUnixTimestamp64Nano(start_time)) AS start_ns, duration_ms,
              iterations, cost_usd, input_tokens, output_tokens, error_count, llm_calls
       FROM trace_figures
       WHERE tenant_id = {tenantId:String} AND project_id = {projectId:String} AND trace_id = {traceId:String}
       ORDER BY computed_at DESC LIMIT 1`,
      { traceId },
    );
    return row;
  }

  /**
   * A trace's spans, deduplicated, in (start time, span id) order, starting after `after`: at most
   * `limit` of them (default MAX_SPANS_PER_READ; at most one more, which a caller asks for to learn
   * whether there are more than it shows). Attributes only when asked. The bloom filter on trace_id
   * finds a trace's granules directly (measured: 5 ms on 10M spans, faster than first looking up its
   * days), so the days are optional.
   */
  async spans(
    traceId: string,
    startTime: string | undefined,
    endTime: string | undefined,
    withAttributes: boolean,
    page: { limit?: number; after?: SpanCursor } = {},
  ): Promise<SpanRecord[]> {
    const limit = page.limit ?? MAX_SPANS_PER_READ;
    if (!Number.isSafeInteger(limit) || limit < 1 || limit > MAX_SPANS_PER_READ + 1) {
      throw new Error(`a span read's limit must be between 1 and ${MAX_SPANS_PER_READ + 1}, got ${limit}`);
    }
    const days = startTime && endTime;
    const after = page.after;
    return this.db.rows<SpanRecord>(
      'query.trace_spans',
      `SELECT span_id, parent_span_id, name, toString(span_type) AS span_type, start_time, end_time, duration_ns,
              toString(status_code) AS status_code, status_message, toString(kind) AS kind, model, input_tokens, output_tokens, cost_usd, cost_source, usage_is_aggregate, tool_name,
              toString(toUnixTimestamp64Nano(start_time)) AS start_ns, toString(toUnixTimestamp64Nano(end_time)) AS end_ns
              ${withAttributes ? ', attributes, attribute_json_keys' : ''}
       FROM spans FINAL
       WHERE tenant_id = {tenantId:String} AND project_id = {projectId:String}
         ${days ? `AND toDate(start_time) BETWEEN toDate({from:DateTime64(9, 'UTC')}) AND toDate({to:DateTime64(9, 'UTC')})` : ''}
         AND trace_id = {traceId:String}
         ${after ? 'AND (toUnixTimestamp64Nano(start_time), span_id) > ({afterNs:Int64}, {afterSpan:String})' : ''}
       ORDER BY start_time, span_id
       LIMIT {limit:UInt32}`,
      {
        traceId,
        limit,
        ...(days ? { from: startTime, to: endTime } : {}),
        ...(after ? { afterNs: after.startNs, afterSpan: after.spanId } : {}),
      },
    );
  }

  /**
   * How many spans the trace has, counted up to `limit` only: whether a trace is larger than a read
   * returns, without holding its spans (or counting millions of them).
   */
  async spanCountUpTo(traceId: string, limit: number): Promise<number> {
    const [row] = await this.db.rows<{ n: number }>(
      'query.trace_span_count',
      `SELECT count() AS n FROM (
         SELECT span_id FROM spans FINAL
         WHERE tenant_id = {tenantId:String} AND project_id = {projectId:String} AND trace_id = {traceId:String}
         LIMIT {limit:UInt32})`,
      { traceId, limit },
    );
    return Number(row?.n ?? 0);
  }

  /**
   * The first 2,000 characters of each tool call's input (its arguments), by span id: what the
   * loop detector compares. Read only when a loop answer is asked for, since inputs can be large;
   * at most `limit` calls, the first in start order.
   */
  async toolArguments(traceId: string, limit = MAX_SPANS_PER_READ): Promise<Map<string, string>> {
    // The first `limit` tool calls in start order: every tool call among a capped read's spans.
    const rows = await this.db.rows<{ span_id: string; tool_arguments: string }>(
      'query.trace_tool_arguments',
      `SELECT span_id, substring(input, 1, 2000) AS tool_arguments
       FROM spans FINAL
       WHERE tenant_id = {tenantId:String} AND project_id = {projectId:String} AND trace_id = {traceId:String}
         AND span_type = 'TOOL' AND input != ''
       ORDER BY start_time, span_id
       LIMIT {limit:UInt32}`,
      { traceId, limit },
    );
    return new Map(rows.map((r) => [r.span_id, r.tool_arguments]));
  }

  /** One span's attributes, resource and message contents (kept out of `trace` for large traces). */
  async spanContent(traceId: string, spanId: string, startTime: string, endTime: string): Promise<SpanContent | undefined> {
    const [row] = await this.db.rows<SpanContent>(
      'query.span_content',
      `SELECT span_id, attributes, attribute_json_keys, resource_attributes, input, output, events.name AS events_name, events.time AS events_time,
              events.attributes AS events_attributes
       FROM spans FINAL
       WHERE tenant_id = {tenantId:String} AND project_id = {projectId:String}
         AND toDate(start_time) BETWEEN toDate({from:DateTime64(9, 'UTC')}) AND toDate({to:DateTime64(9, 'UTC')})
         AND trace_id = {traceId:String} AND span_id = {spanId:String}`,
      { traceId, spanId, from: startTime, to: endTime },
    );
    return row;
  }

  /**
   * The GenAI events that came as log records for one span (span_log_events), in time order, at
   * most MAX_LOG_EVENTS_PER_SPAN: a call's messages, sent apart from its span.
   */
  async spanLogEvents(traceId: string, spanId: string): Promise<SpanLogEvent[]> {
    return this.db.rows<SpanLogEvent>(
      'query.span_log_events',
      `SELECT time, name, attributes, input, output
       FROM span_log_events FINAL
       WHERE tenant_id = {tenantId:String} AND project_id = {projectId:String} AND trace_id = {traceId:String} AND span_id = {spanId:String}
       ORDER BY time, seq, record_hash
       LIMIT {limit:UInt32}`,
      { traceId, spanId, limit: MAX_LOG_EVENTS_PER_SPAN },
    );
  }

  /** The project's median iterations over the week before `before` (the loop detector's yardstick). */
  async medianIterations(before: string): Promise<number | undefined> {
    const [row] = await this.db.rows<{ median: number; n: number }>(
      'query.median_iterations',
      `SELECT quantileExact(0.5)(iterations) AS median, count() AS n FROM trace_figures FINAL
       WHERE tenant_id = {tenantId:String} AND project_id = {projectId:String}
         AND start_time BETWEEN {before:DateTime64(9, 'UTC')} - INTERVAL 7 DAY AND {before:DateTime64(9, 'UTC')}`,
      { before },
    );
    return row && Number(row.n) >= 20 ? Number(row.median) : undefined;
  }

  /**
   * A page of traces, newest first, and the total matching the filter, from the trace figures of
   * the filter's range (see traceFilterSql's `figures`). The total is a second read of every
   * matching trace: with `count: false` (the caller did not ask for it) it is not made, and `total`
   * is undefined.
   *
   * A page with no start of range (the traces page as it first opens) is read from the newest
   * minutes first: the traces filed in a window before the newest minute (or the cursor's), the
   * window widened while it holds less than the page, and the whole project last. The whole
   * project's figures are sorted by trace id, so reading them for 20 traces merges every trace
   * under FINAL, and costs more the more the upkeep left unmerged; the newest minutes of
   * trace_minutes are a read of their own traces. docs/architecture.md, "The newest traces".
   */
  async page(
    filter: TraceFilter | undefined,
    first: number,
    after: [string, string] | undefined,
    count = true,
  ): Promise<{ rows: TraceFiguresRow[]; total: number | undefined }> {
    const sql = traceFilterSql(filter);
    const select = (figures: string) =>
      `SELECT *, toString(toUnixTimestamp64Nano(start_time)) AS start_ns, [] AS span_types, [] AS llm_spans, '' AS root_span_id, '' AS root_type
      FROM ${figures}`;
    const cursor = after
      ? `${sql.traces ? ' AND' : ' WHERE'} (toUnixTimestamp64Nano(start_time), trace_id) < ({afterNs:Int64}, {afterTrace:String})`
      : '';
    const params = { ...sql.params, ...(after ? { afterNs: after[0], afterTrace: after[1] } : {}), limit: first + 1 };
    const pageFrom = (name: string, figures: string) =>
      this.db.rows<TraceFiguresRow>(
        name,
        `SELECT * FROM (${select(figures)})${sql.traces}${cursor} ORDER BY start_time DESC, trace_id DESC LIMIT {limit:UInt32}`,
        params,
      );
    const newestPage = async () => {
      for (const minutes of NEWEST_WINDOWS_MINUTES) {
        const figures = newestTracesFiled(minutes, {
          afterNsParam: after ? 'afterNs' : undefined,
          toParam: 'toMs' in params ? 'toMs' : undefined,
        });
        const rows = await pageFrom('query.traces_page_newest', figures);
        if (rows.length >= params.limit) return rows;
      }
      return pageFrom('query.traces_page', sql.figures);
    };
    // An attribute or feedback filter reads the project's spans or scores in a subquery of its own,
    // which every window would read again: such a page goes to the whole project at once.
    const windowed = sql.wholeProject && !filter?.attributes?.length && !filter?.feedback;
    const [rows, counted] = await Promise.all([
      windowed ? newestPage() : pageFrom('query.traces_page', sql.figures),
      count
        ? this.db.rows<{ n: number }>('query.traces_count', `SELECT count() AS n FROM (${select(sql.figures)})${sql.traces}`, sql.params)
        : undefined,
    ]);
    return { rows, total: counted && Number(counted[0]?.n ?? 0) };
  }
}

/**
 * Spans in start order, and among spans that start at the same instant, a parent before its
 * children (an agent span often starts in the same nanosecond as the root that opened it).
 * The records come sorted by start; only runs of equal starts are reordered, by depth.
 */
export function parentsFirst<T extends Pick<SpanRecord, 'span_id' | 'parent_span_id' | 'start_ns'>>(records: T[]): T[] {
  // Built at the first tie only: most traces have none.
  let parentOf: Map<string, string> | undefined;
  const depths = new Map<string, number>();
  const depth = (spanId: string): number => {
    let d = depths.get(spanId);
    if (d !== undefined) return d;
    // Walk up to a known depth or the top (a missing parent counts as the top); cycles stop at the trace's size.
    parentOf ??= new Map(records.map((r) => [r.span_id, r.parent_span_id]));
    const chain: string[] = [];
    let at: string | undefined = spanId;
    while (at && depths.get(at) === undefined && parentOf.has(at) && chain.length <= records.length) {
      chain.push(at);
      at = parentOf.get(at);
    }
    d = at && depths.get(at) !== undefined ? depths.get(at)! : -1;
    for (let i = chain.length - 1; i >= 0; i--) depths.set(chain[i]!, ++d);
    return depths.get(spanId)!;
  };
  for (let i = 0; i < records.length;) {
    let end = i + 1;
    while (end < records.length && records[end]!.start_ns === records[i]!.start_ns) end++;
    if (end - i > 1) {
      const run = records
        .slice(i, end)
        .sort((a, b) => depth(a.span_id) - depth(b.span_id) || (a.span_id < b.span_id ? -1 : a.span_id > b.span_id ? 1 : 0));
      for (let k = 0; k < run.length; k++) records[i + k] = run[k]!;
    }
    i = end;
  }
  return records;
}
