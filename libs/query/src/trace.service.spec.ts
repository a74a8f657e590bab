import type { ScopedClickHouse } from './scoped-clickhouse';
import { MAX_SPANS_PER_READ, type SpanRecord } from './trace.repository';
import {
  MAX_TRACE_READS_PER_REQUEST,
  TraceService,
  displayedSpanType,
  figuresShowGenAi,
  parseSpanCursor,
  parseSpanId,
  parseTraceId,
  spanCursor,
  spansShowGenAi,
} from './trace.service';

const TRACE = '0af7651916cd43dd8448eb211c80319c';

function record(spanId: string, parent: string, startNs: number, type = 'TOOL', status: SpanRecord['status_code'] = 'UNSET'): SpanRecord {
  const start = String(startNs);
  return {
    span_id: spanId,
    parent_span_id: parent,
    name: `span ${spanId}`,
    span_type: type,
    start_time: '2026-11-10 09:00:00.000000000',
    end_time: '2026-11-10 09:00:00.000000000',
    duration_ns: 1_000_000,
    status_code: status,
    status_message: '',
    kind: 'INTERNAL',
    model: '',
    input_tokens: 0,
    output_tokens: 0,
    cost_usd: 0,
    cost_source: '',
    usage_is_aggregate: 0,
    tool_name: '',
    start_ns: start,
    end_ns: String(startNs + 1_000_000),
  };
}

/**
 * A ClickHouse that holds one trace's spans and answers the span reads as the SQL does: (start,
 * span id) order, after the cursor, up to the limit. Counts the statements by name.
 */
function store(spans: SpanRecord[]) {
  const calls: Array<{ name: string; params: Record<string, unknown> }> = [];
  const key = (r: SpanRecord) => [BigInt(r.start_ns), r.span_id] as const;
  const sorted = [...spans].sort((a, b) => {
    const [x, y] = [key(a), key(b)];
    return x[0] !== y[0] ? (x[0] < y[0] ? -1 : 1) : x[1] < y[1] ? -1 : x[1] > y[1] ? 1 : 0;
  });
  const db = {
    rows: async (name: string, _sql: string, params: Record<string, unknown> = {}) => {
      calls.push({ name, params });
      if (name === 'query.trace_spans') {
        const afterNs = params.afterNs === undefined ? undefined : BigInt(params.afterNs as string);
        const after = sorted.filter(
          (r) =>
            afterNs === undefined ||
            BigInt(r.start_ns) > afterNs ||
            (BigInt(r.start_ns) === afterNs && r.span_id > (params.afterSpan as string)),
        );
        return after.slice(0, params.limit as number);
      }
      if (name === 'query.trace_span_count') return [{ n: Math.min(sorted.length, params.limit as number) }];
      return [];
    },
  };
  return { db: db as unknown as ScopedClickHouse, calls, count: (name: string) => calls.filter((c) => c.name === name).length };
}

/** Seven spans; three start in the same nanosecond (ties are ordered by span id). */
const SEVEN = [
  record('00000000000000aa', '', 100, 'HTTP'),
  record('00000000000000b1', '00000000000000aa', 200, 'LLM'),
  record('00000000000000b3', '00000000000000aa', 200),
  record('00000000000000b2', '00000000000000aa', 200),
  record('00000000000000c1', '00000000000000aa', 300),
  record('00000000000000c2', '00000000000000aa', 400),
  record('00000000000000c3', '00000000000000aa', 500),
];

describe('trace ids', () => {
  it('takes 32 hex characters in any case and answers them lowercased', () => {
    expect(parseTraceId(TRACE.toUpperCase())).toBe(TRACE);
    expect(parseTraceId(TRACE)).toBe(TRACE);
  });

  it.each(['', 'not-hex', TRACE.slice(1), `${TRACE}0`, `${TRACE.slice(1)}g`, "' OR 1=1 --"])('refuses %j as BAD_USER_INPUT', (value) => {
    expect(() => parseTraceId(value)).toThrow(
      expect.objectContaining({ code: 'BAD_USER_INPUT', message: 'traceId must be 32 hex characters' }),
    );
  });

  it('takes span ids of 16 hex characters', () => {
    expect(parseSpanId('00F067AA0BA902B7')).toBe('00f067aa0ba902b7');
    expect(() => parseSpanId('00f067aa0ba902b')).toThrow(
      expect.objectContaining({ code: 'BAD_USER_INPUT', message: 'spanId must be 16 hex characters' }),
    );
  });
});

describe('span cursors', () => {
  it('round-trip a span position', () => {
    expect(parseSpanCursor(spanCursor(SEVEN[2]!))).toEqual({ startNs: '200', spanId: '00000000000000b3' });
    expect(parseSpanCursor(undefined)).toBeUndefined();
    expect(parseSpanCursor(null)).toBeUndefined();
  });

  it.each([
    ['not a cursor', 'nope'],
    ["a traces page's cursor", Buffer.from(JSON.stringify(['100', TRACE])).toString('base64url')],
    ['a start that is not a number', Buffer.from(JSON.stringify(['1e9', '00000000000000aa'])).toString('base64url')],
    ['a start beyond Int64', Buffer.from(JSON.stringify(['9999999999999999999', '00000000000000aa'])).toString('base64url')],
  ])('refuse %s', (_what, cursor) => {
    expect(() => parseSpanCursor(cursor)).toThrow(expect.objectContaining({ code: 'BAD_USER_INPUT' }));
  });
});

describe('displayed span type', () => {
  it('shows the root of a GenAI trace as RUN, and nothing else changes', () => {
    expect(displayedSpanType({ parent_span_id: '', span_type: 'HTTP' }, true)).toBe('RUN');
    expect(displayedSpanType({ parent_span_id: '', span_type: 'HTTP' }, false)).toBe('HTTP');
    expect(displayedSpanType({ parent_span_id: '', span_type: 'LLM' }, true)).toBe('LLM');
    expect(displayedSpanType({ parent_span_id: 'ab', span_type: 'AGENT' }, true)).toBe('AGENT');
  });

  it('knows a GenAI trace by its figures or by its spans', () => {
    expect(figuresShowGenAi({ span_types: [], llm_calls: 2 })).toBe(true);
    expect(figuresShowGenAi({ span_types: ['HTTP', 'AGENT'], llm_calls: 0 })).toBe(true);
    expect(figuresShowGenAi({ span_types: ['HTTP', 'DB'], llm_calls: 0 })).toBe(false);
    expect(spansShowGenAi(SEVEN)).toBe(true);
    expect(spansShowGenAi(SEVEN.filter((r) => r.span_type !== 'LLM'))).toBe(false);
  });
});

describe('TraceReads', () => {
  it('reads at most the cap, asking for one more to tell that there are more', async () => {
    const { db, calls } = store(SEVEN);
    const read = await new TraceService({ maxSpansPerRead: 5 }).reads(db).spans(TRACE);
    expect(read.truncated).toBe(true);
    expect(read.records.map((r) => r.span_id)).toEqual([
      '00000000000000aa',
      '00000000000000b1',
      '00000000000000b2',
      '00000000000000b3',
      '00000000000000c1',
    ]);
    expect(calls).toEqual([{ name: 'query.trace_spans', params: expect.objectContaining({ traceId: TRACE, limit: 6 }) }]);
    const whole = await new TraceService({ maxSpansPerRead: 7 }).reads(store(SEVEN).db).spans(TRACE);
    expect(whole).toMatchObject({ truncated: false, records: expect.any(Array) });
    expect(whole.records).toHaveLength(7);
  });

  it('pages through every span once, ties included, and refuses a page larger than the cap', async () => {
    const reads = new TraceService({ maxSpansPerRead: 5 }).reads(store(SEVEN).db);
    const seen: string[] = [];
    let after: string | undefined;
    for (let pages = 0; pages < 10; pages++) {
      const page = await reads.page(TRACE, { first: 2, after });
      seen.push(...page.records.map((r) => r.span_id));
      if (!page.hasNextPage) break;
      after = spanCursor(page.records.at(-1)!);
    }
    expect(seen).toEqual(
      [...SEVEN].sort((a, b) => Number(a.start_ns) - Number(b.start_ns) || (a.span_id < b.span_id ? -1 : 1)).map((r) => r.span_id),
    );
    expect(() => reads.page(TRACE, { first: 6 })).toThrow(
      expect.objectContaining({ code: 'BAD_USER_INPUT', message: 'first must be between 1 and 5' }),
    );
    expect(() => reads.page(TRACE, { first: 0 })).toThrow(expect.objectContaining({ code: 'BAD_USER_INPUT' }));
    // Without `first`, a page is as large as the cap.
    expect((await reads.page(TRACE, {})).records).toHaveLength(5);
  });

  it('tells whether a trace is truncated from its read when there is one, otherwise by counting up to the cap', async () => {
    const counted = store(SEVEN);
    expect(await new TraceService({ maxSpansPerRead: 6 }).reads(counted.db).truncated(TRACE)).toBe(true);
    expect(await new TraceService({ maxSpansPerRead: 7 }).reads(store(SEVEN).db).truncated(TRACE)).toBe(false);
    expect(counted.calls).toEqual([{ name: 'query.trace_span_count', params: { traceId: TRACE, limit: 7 } }]);
    const read = store(SEVEN);
    const reads = new TraceService({ maxSpansPerRead: 6 }).reads(read.db);
    await reads.spans(TRACE);
    expect(await reads.truncated(TRACE)).toBe(true);
    expect(read.count('query.trace_span_count')).toBe(0);
  });

  it('analyses the first spans of a larger trace and says so, first among the findings', async () => {
    const truncated = await new TraceService({ maxSpansPerRead: 5 }).reads(store(SEVEN).db).analysis({ traceId: TRACE });
    expect(truncated.truncated).toBe(true);
    expect(truncated.spanCount).toBe(5);
    expect(truncated.findings[0]).toEqual({
      kind: 'SPANS_TRUNCATED',
      message: expect.stringContaining('covers its first 5 in start order'),
      spanIds: [],
    });
    const whole = await new TraceService().reads(store(SEVEN).db).analysis({ traceId: TRACE });
    expect(whole.truncated).toBe(false);
    expect(whole.spanCount).toBe(7);
    expect(whole.findings.some((f) => f.kind === 'SPANS_TRUNCATED')).toBe(false);
  });

  it('counts span reads against the request budget, once per distinct read', async () => {
    const { db } = store(SEVEN);
    const reads = new TraceService({ maxReadsPerRequest: 2 }).reads(db);
    await reads.spans(TRACE);
    await reads.spans(TRACE);
    await reads.page(TRACE, { first: 3 });
    await expect(reads.spans('1'.repeat(32))).rejects.toMatchObject({ code: 'QUERY_TOO_EXPENSIVE' });
    expect(new TraceService().maxReadsPerRequest).toBe(MAX_TRACE_READS_PER_REQUEST);
  });

  it('refuses a cap beyond what the repository reads', () => {
    expect(new TraceService().maxSpansPerRead).toBe(MAX_SPANS_PER_READ);
    expect(() => new TraceService({ maxSpansPerRead: MAX_SPANS_PER_READ + 1 })).toThrow(/maxSpansPerRead/);
    expect(() => new TraceService({ maxSpansPerRead: 0 })).toThrow(/maxSpansPerRead/);
  });
});
