import { MAX_TOKEN_COUNT, TIME_DOMAIN, UINT32_MAX } from '@spanforge/otlp';
import { SPAN_COLUMN_DOMAINS, conformRow, serialiseRow } from './span.columns';
import { nanosToDateTime64, spanPartition, type SpanRow } from './span.row';

/** A row as toSpanRow builds it for an ordinary LLM span. */
function row(overrides: Partial<SpanRow> = {}): SpanRow {
  return {
    tenant_id: 't',
    project_id: 'p',
    trace_id: 'a'.repeat(32),
    span_id: 'b'.repeat(16),
    parent_span_id: '',
    trace_state: '',
    flags: 1,
    name: 'chat',
    kind: 'CLIENT',
    service_name: 'svc',
    scope_name: '',
    scope_version: '',
    start_time: nanosToDateTime64(1_700_000_000_000_000_000n),
    end_time: nanosToDateTime64(1_700_000_001_000_000_000n),
    duration_ns: '1000000000',
    status_code: 'UNSET',
    status_message: '',
    span_type: 'LLM',
    convention: 'gen_ai',
    operation: 'chat',
    session_id: '',
    user_id: '',
    run_id: '',
    agent_name: '',
    tool_name: '',
    model: 'gpt-4o',
    model_requested: 'gpt-4o',
    provider: 'openai',
    tokens_input_uncached: 10,
    tokens_cache_read: 0,
    tokens_cache_write: 0,
    tokens_output: 5,
    tokens_reasoning: 0,
    usage_is_aggregate: 0,
    cost_usd: 0.001,
    cost_source: 'table',
    price_version: 'v',
    ttft_ms: null,
    error_type: '',
    iterations: -1,
    attributes: {},
    attribute_json_keys: [],
    resource_attributes: {},
    'events.time': [],
    'events.name': [],
    'events.attributes': [],
    'links.trace_id': [],
    'links.span_id': [],
    'links.trace_state': [],
    'links.attributes': [],
    input: '',
    output: '',
    dropped_attributes_count: 0,
    dropped_events_count: 0,
    dropped_links_count: 0,
    truncated: 0,
    redactions: 0,
    retention_days: 0,
    ...overrides,
  };
}

describe("the spans table's column domains", () => {
  it('name every column of a row', () => {
    expect(Object.keys(SPAN_COLUMN_DOMAINS).sort()).toEqual(Object.keys(row()).sort());
  });

  it('change nothing in a row the normaliser builds', () => {
    const built = row();
    expect(conformRow(built)).toEqual([]);
    expect(built).toEqual(row());
  });

  it.each<[string, Partial<SpanRow>, Partial<SpanRow>]>([
    ['a fractional token count', { tokens_input_uncached: 12.25 }, { tokens_input_uncached: 0 }],
    ['a negative token count', { tokens_output: -1 }, { tokens_output: 0 }],
    ['a token count past the cap', { tokens_cache_read: MAX_TOKEN_COUNT + 1 }, { tokens_cache_read: 0 }],
    ['iterations past Int32', { iterations: 2 ** 31 }, { iterations: -1 }],
    ['a cost that is not finite', { cost_usd: Number.POSITIVE_INFINITY }, { cost_usd: 0 }],
    ['a negative TTFT', { ttft_ms: -3 }, { ttft_ms: null }],
    ['a count past UInt32', { dropped_events_count: UINT32_MAX + 1 }, { dropped_events_count: UINT32_MAX }],
    ['an unknown span type', { span_type: 'WIZARD' }, { span_type: 'OTHER' }],
    ['a duration that is not a UInt64', { duration_ns: '-5' }, { duration_ns: '0' }],
    [
      'a time past the range',
      { end_time: nanosToDateTime64(TIME_DOMAIN.maxNanos + 1n) },
      { end_time: nanosToDateTime64(TIME_DOMAIN.maxNanos) },
    ],
  ])('bring %s into the domain and name the column', (_what, bad, conformed) => {
    const built = row(bad);
    expect(conformRow(built)).toEqual(Object.keys(bad));
    expect(built).toEqual(row(conformed));
  });
});

describe('serialiseRow', () => {
  it('writes a row as one JSON line', () => {
    expect(JSON.parse(serialiseRow(row()))).toEqual(row());
  });

  it('replaces lone surrogates in values and keys, which ClickHouse refuses', () => {
    const line = serialiseRow(row({ name: 'half \ud83d', attributes: { 'key\udc00': 'value \ud800!' } }));
    expect(line).not.toMatch(/\\ud[89a-f]/i);
    expect(JSON.parse(line)).toMatchObject({ name: 'half \ufffd', attributes: { 'key\ufffd': 'value \ufffd!' } });
  });

  it('keeps a whole surrogate pair (an emoji) as it is', () => {
    expect(JSON.parse(serialiseRow(row({ name: 'ok 🙂' }))).name).toBe('ok 🙂');
  });
});

describe('times as the spans table reads them', () => {
  it.each<[string, bigint, string]>([
    ['one second after the epoch', 1_000_000_000n, '0000000001.000000000'],
    ['before 1973-03-03 (fewer than nine digits of seconds)', 3_456_000_000_000_001n, '0003456000.000000001'],
    ['today', 1_764_547_200_123_456_789n, '1764547200.123456789'],
  ])('%s, padded so no digit string reads as a date', (_when, nanos, text) => {
    expect(nanosToDateTime64(nanos)).toBe(text);
  });

  it('file a kept row under its start month, as toYYYYMM does', () => {
    expect(spanPartition(1n, 0)).toBe(197001);
    expect(spanPartition(BigInt(Date.UTC(2026, 11, 31, 23, 59, 59)) * 1_000_000n, 0)).toBe(202612);
    expect(spanPartition(TIME_DOMAIN.maxNanos, 0)).toBe(214906);
  });

  it('file a row under a retention under the Monday of the week it expires in, as toYYYYMMDD(toMonday(toDate(start) + days)) does', () => {
    const at = (ms: number) => BigInt(ms) * 1_000_000n;
    // 2026-12-01 (a Tuesday) + 30 days = 2026-12-31, a Thursday: the week of Monday 2026-12-28.
    expect(spanPartition(at(Date.UTC(2026, 11, 1, 23, 59)), 30)).toBe(20261228);
    // + 6 days = 2026-12-07, itself a Monday.
    expect(spanPartition(at(Date.UTC(2026, 11, 1)), 6)).toBe(20261207);
    expect(spanPartition(at(Date.UTC(2026, 11, 1)), 5)).toBe(20261130);
  });
});
