import { analyseTrace, type AnalysisSpan, type TraceAnalysis } from '@spanforge/analysis';
import type { TraceFiguresRow } from '@spanforge/clickhouse';
import { badInput, DomainError, ErrorCode } from '@spanforge/errors';
import { isGenAiTrace, joinMessageArrays, rootSpanType } from '@spanforge/semconv';
import { decodeCursor, encodeCursor } from './query.values';
import type { ScopedClickHouse } from './scoped-clickhouse';
import type { TraceFilter } from './trace-filter';
import {
  MAX_SPANS_PER_READ,
  TraceRepository,
  type SpanContent,
  type SpanCursor,
  type SpanLogEvent,
  type SpanRecord,
} from './trace.repository';

/**
 * What a trace means to the API, in one place: which trace ids a caller may name, how its spans
 * are read (capped, paged, once per request), what type each span is shown with, and how the
 * analysis sees the spans. The GraphQL resolvers and the waterfall only map its answers to their
 * shapes.
 */

/**
 * Span reads (distinct traces, or the same trace read differently) one request may make. A traces
 * page caps itself at 50 traces when it asks for per-trace fields, but aliases could repeat it;
 * this bounds the request as a whole.
 */
export const MAX_TRACE_READS_PER_REQUEST = 200;

const TRACE_ID = /^[0-9a-f]{32}$/;
const SPAN_ID = /^[0-9a-f]{16}$/;
const INT64_MAX = 2n ** 63n - 1n;

/** A trace id from a caller: 32 hex characters in any case, answered lowercased (as stored). */
export function parseTraceId(value: string): string {
  const id = typeof value === 'string' ? value.toLowerCase() : '';
  if (!TRACE_ID.test(id)) throw badInput('traceId must be 32 hex characters');
  return id;
}

/** A span id from a caller: 16 hex characters in any case, answered lowercased. */
export function parseSpanId(value: string): string {
  const id = typeof value === 'string' ? value.toLowerCase() : '';
  if (!SPAN_ID.test(id)) throw badInput('spanId must be 16 hex characters');
  return id;
}

/** The opaque cursor of a span: `after` it continues with the next span in (start time, span id) order. */
export function spanCursor(record: Pick<SpanRecord, 'start_ns' | 'span_id'>): string {
  return encodeCursor([record.start_ns, record.span_id]);
}

/** A span cursor from a caller, checked (it becomes SQL parameters), or undefined when absent. */
export function parseSpanCursor(after: string | null | undefined): SpanCursor | undefined {
  const values = decodeCursor(after, ['string', 'string']) as [string, string] | undefined;
  if (!values) return undefined;
  const [startNs, spanId] = values;
  if (!/^\d{1,19}$/.test(startNs) || BigInt(startNs) > INT64_MAX || !SPAN_ID.test(spanId))
    throw badInput('`after` is not a cursor this API returned');
  return { startNs, spanId };
}

/** Whether a trace's figures show it is a GenAI trace: it made an LLM call, or has a span of a GenAI type. */
export function figuresShowGenAi(row: Pick<TraceFiguresRow, 'span_types' | 'llm_calls'>): boolean {
  return isGenAiTrace(row.span_types ?? []) || Number(row.llm_calls) > 0;
}

/** Whether spans read of a trace show it is a GenAI trace (a span of a GenAI type among them). */
export function spansShowGenAi(records: readonly Pick<SpanRecord, 'span_type'>[]): boolean {
  return isGenAiTrace(records.map((r) => r.span_type));
}

/**
 * The type a span is shown with. The root of a GenAI trace is RUN — also when the root itself
 * carried no LLM convention (a plain HTTP handler whose children call models). The worker's upkeep
 * writes such roots again as RUN; this covers the moments before, and spans stored before it did.
 */
export function displayedSpanType(record: Pick<SpanRecord, 'parent_span_id' | 'span_type'>, genAiTrace: boolean): string {
  return record.parent_span_id === '' ? rootSpanType(record.span_type, genAiTrace) : record.span_type;
}

/** Stored spans as libs/analysis reads them (tool arguments by span id, when the loop check needs them). */
export function analysisSpans(records: readonly SpanRecord[], toolArguments?: ReadonlyMap<string, string>): AnalysisSpan[] {
  return records.map((r) => ({
    spanId: r.span_id,
    parentSpanId: r.parent_span_id,
    name: r.name,
    type: r.span_type,
    startNs: BigInt(r.start_ns),
    endNs: BigInt(r.end_ns),
    status: r.status_code,
    toolName: r.tool_name || undefined,
    toolArguments: toolArguments?.get(r.span_id),
  }));
}

/** A finding: libs/analysis's kinds, and SPANS_TRUNCATED (the analysis saw only the first spans). */
export interface TraceFinding {
  kind: string;
  message: string;
  spanIds: string[];
}

/** The analysis of a trace's (capped) span read. */
export interface AnalysedTrace extends Omit<TraceAnalysis, 'findings'> {
  findings: TraceFinding[];
  /** The trace has more spans than the analysis saw (the first `maxSpansPerRead`, in start order). */
  truncated: boolean;
}

/** A trace's first spans: the read `spans` shows, the analysis and the waterfall use. */
export interface SpanRead {
  /** In (start time, span id) order; the caller sorts a copy if it shows them otherwise. */
  records: SpanRecord[];
  /** The trace has more spans than these. */
  truncated: boolean;
}

export interface SpanPage {
  /** In (start time, span id) order. */
  records: SpanRecord[];
  hasNextPage: boolean;
}

/** What the analysis needs of a trace besides its spans: from its figures, when known. */
export interface TraceFacts {
  traceId: string;
  iterations?: number;
  /** The trace's start (ClickHouse time): the loop check compares with the project's week before it. */
  startTime?: string;
}

export interface TraceServiceOptions {
  /** The most spans one read returns (default and at most MAX_SPANS_PER_READ); tests set a small one. */
  maxSpansPerRead?: number;
  /** The most span reads one request makes (default MAX_TRACE_READS_PER_REQUEST). */
  maxReadsPerRequest?: number;
}

/** The rules and limits of trace reads; stateless. Each request reads through its own `reads(db)`. */
export class TraceService {
  readonly maxSpansPerRead: number;
  readonly maxReadsPerRequest: number;

  constructor(options: TraceServiceOptions = {}) {
    this.maxSpansPerRead = options.maxSpansPerRead ?? MAX_SPANS_PER_READ;
    this.maxReadsPerRequest = options.maxReadsPerRequest ?? MAX_TRACE_READS_PER_REQUEST;
    if (!Number.isSafeInteger(this.maxSpansPerRead) || this.maxSpansPerRead < 1 || this.maxSpansPerRead > MAX_SPANS_PER_READ) {
      throw new Error(`maxSpansPerRead must be between 1 and ${MAX_SPANS_PER_READ}, got ${this.maxSpansPerRead}`);
    }
    if (!Number.isSafeInteger(this.maxReadsPerRequest) || this.maxReadsPerRequest < 1)
      throw new Error(`maxReadsPerRequest must be a positive integer, got ${this.maxReadsPerRequest}`);
  }

  /** The trace reads of one request (a GraphQL request, a REST call) on one project's data: make one per request. */
  reads(db: ScopedClickHouse): TraceReads {
    return new TraceReads(this, new TraceRepository(db));
  }
}

/**
 * One request's trace reads. Per trace, the spans are read once whichever fields (spans, critical
 * path, findings, spansTruncated) ask for them, and analysed once; the request's span reads are
 * counted against `maxReadsPerRequest`. Lives as long as its request: nothing outlives it.
 */
export class TraceReads {
  /** Span reads (and span counts) by what they read: the request's budget counts these. */
  private readonly spanReads = new Map<string, Promise<unknown>>();
  private readonly analyses = new Map<string, Promise<AnalysedTrace>>();

  constructor(
    readonly service: TraceService,
    private readonly repository: TraceRepository,
  ) {}

  /** A page of traces, newest first, and how many match (undefined when `count` is false: not counted). */
  tracesPage(
    filter: TraceFilter | undefined,
    first: number,
    after: [string, string] | undefined,
    count = true,
  ): Promise<{ rows: TraceFiguresRow[]; total: number | undefined }> {
    return this.repository.page(filter, first, after, count);
  }

  /** A trace's figures as last recomputed, or (its first batch is being written) from the rollup; undefined when it does not exist. */
  async figures(traceId: string): Promise<TraceFiguresRow | undefined> {
    const latest = await this.repository.latestFigures(traceId);
    if (latest) return latest;
    const bounds = await this.repository.bounds(traceId);
    return bounds && (await this.repository.figures(traceId, bounds.start_time, bounds.end_time));
  }

  /** Whether the trace exists, and its time bounds. */
  bounds(traceId: string): Promise<{ start_time: string; end_time: string } | undefined> {
    return this.repository.bounds(traceId);
  }

  /**
   * One span's attributes, resource, message contents and events; undefined when it does not
   * exist. GenAI events that came as log records join it: their messages are its contents when the
   * span carries none itself, and they are among its events.
   */
  async spanContent(traceId: string, spanId: string): Promise<SpanContent | undefined> {
    const bounds = await this.repository.bounds(traceId);
    if (!bounds) return undefined;
    const [content, logEvents] = await Promise.all([
      this.repository.spanContent(traceId, spanId, bounds.start_time, bounds.end_time),
      this.repository.spanLogEvents(traceId, spanId),
    ]);
    return content && withLogEvents(content, logEvents);
  }

  /**
   * The trace's first `maxSpansPerRead` spans in start order, and whether it has more. Attributes
   * make rows much larger: a request that shows them reads them, the others do not. Read by trace
   * id alone (no days): the same read whether the figures came first or not.
   */
  spans(traceId: string, withAttributes = false): Promise<SpanRead> {
    const cap = this.service.maxSpansPerRead;
    return this.once(`${traceId}|spans|${withAttributes}`, async () => {
      const records = await this.repository.spans(traceId, undefined, undefined, withAttributes, { limit: cap + 1 });
      return { records: records.length > cap ? records.slice(0, cap) : records, truncated: records.length > cap };
    });
  }

  /**
   * A page of the trace's spans in (start time, span id) order: `first` (1 to `maxSpansPerRead`;
   * that many when absent) after the span whose cursor `after` is.
   */
  page(traceId: string, options: { first?: number | null; after?: string | null; withAttributes?: boolean }): Promise<SpanPage> {
    const cap = this.service.maxSpansPerRead;
    const first = options.first ?? cap;
    if (!Number.isInteger(first) || first < 1 || first > cap) throw badInput(`first must be between 1 and ${cap}`);
    const after = parseSpanCursor(options.after);
    const withAttributes = options.withAttributes ?? false;
    const key = `${traceId}|page|${withAttributes}|${first}|${after ? `${after.startNs}.${after.spanId}` : ''}`;
    return this.once(key, async () => {
      const records = await this.repository.spans(traceId, undefined, undefined, withAttributes, { limit: first + 1, after });
      return { records: records.length > first ? records.slice(0, first) : records, hasNextPage: records.length > first };
    });
  }

  /**
   * Whether the trace has more spans than `spans` returns. Answered from the request's read of the
   * spans when there is one; otherwise counted (up to the cap, without reading the spans).
   */
  truncated(traceId: string): Promise<boolean> {
    for (const withAttributes of [false, true]) {
      const read = this.spanReads.get(`${traceId}|spans|${withAttributes}`) as Promise<SpanRead> | undefined;
      if (read) return read.then((r) => r.truncated);
    }
    const cap = this.service.maxSpansPerRead;
    return this.once(`${traceId}|count`, () => this.repository.spanCountUpTo(traceId, cap + 1)).then((n) => n > cap);
  }

  /**
   * libs/analysis over the trace's `spans` read, once per trace and request. With `loops` (the
   * caller wants loopSuspected or findings) the tool calls' arguments are read too (a second,
   * narrow read: inputs can be large) with the project's median iterations, for the loop check.
   * A trace larger than a read is analysed over its first spans, and a SPANS_TRUNCATED finding says so.
   */
  analysis(trace: TraceFacts, loops = false): Promise<AnalysedTrace> {
    const key = `${trace.traceId}|${loops}`;
    let analysis = this.analyses.get(key);
    if (!analysis) {
      analysis = (async () => {
        const cap = this.service.maxSpansPerRead;
        const [read, median, toolArguments] = await Promise.all([
          this.spans(trace.traceId),
          loops && trace.startTime ? this.repository.medianIterations(trace.startTime) : Promise.resolve(undefined),
          loops ? this.repository.toolArguments(trace.traceId, cap) : Promise.resolve(undefined),
        ]);
        const result = analyseTrace(analysisSpans(read.records, toolArguments), {
          iterations: trace.iterations,
          projectMedianIterations: median,
        });
        const findings: TraceFinding[] = result.findings;
        return { ...result, truncated: read.truncated, findings: read.truncated ? [truncationFinding(cap), ...findings] : findings };
      })();
      this.analyses.set(key, analysis);
    }
    return analysis;
  }

  /** A span read of this request: the same read once, and none past the request's budget. */
  private once<T>(key: string, read: () => Promise<T>): Promise<T> {
    let pending = this.spanReads.get(key) as Promise<T> | undefined;
    if (!pending) {
      if (this.spanReads.size >= this.service.maxReadsPerRequest) {
        const most = this.service.maxReadsPerRequest;
        return Promise.reject(
          new DomainError(
            ErrorCode.QUERY_TOO_EXPENSIVE,
            `this request reads the spans of more than ${most} traces; ask for fewer traces' spans or analysis at once`,
          ),
        );
      }
      pending = read();
      this.spanReads.set(key, pending);
    }
    return pending;
  }
}

function truncationFinding(cap: number): TraceFinding {
  const spans = cap.toLocaleString('en-US');
  return {
    kind: 'SPANS_TRUNCATED',
    message: `This trace has more than ${spans} spans: the analysis covers its first ${spans} in start order, so later spans are not on the critical path or in these findings.`,
    spanIds: [],
  };
}

/** A span's stored content with the GenAI events sent for it as log records (in time order). */
export function withLogEvents(content: SpanContent, events: SpanLogEvent[]): SpanContent {
  if (events.length === 0) return content;
  return {
    ...content,
    input: content.input || joinMessageArrays(events.map((event) => event.input)),
    output: content.output || joinMessageArrays(events.map((event) => event.output)),
    events_name: [...content.events_name, ...events.map((event) => event.name)],
    events_time: [...content.events_time, ...events.map((event) => event.time)],
    events_attributes: [...content.events_attributes, ...events.map((event) => event.attributes)],
  };
}
