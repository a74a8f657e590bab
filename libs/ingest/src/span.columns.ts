import { INT32_MAX, MAX_TOKEN_COUNT, TIME_DOMAIN, UINT32_MAX, wellFormed } from '@spanforge/otlp';
import { nanosToDateTime64, type SpanRow } from './span.row';

/**
 * The accepted domain of every column of the `spans` table, and what happens to a value outside
 * it. The type makes the table complete: a column added to SpanRow does not compile until its
 * domain is written here. Values are first checked where they are read — times by the gateway
 * and the decoders (store-domain.ts, a span outside is rejected `timestamp_out_of_range` before
 * the 200), token counts, costs and iterations by the normaliser — so `conformRow` converts
 * nothing in a correct build; it is the last guard before ClickHouse, and each conversion it makes
 * is counted (a bug to look at, never a lost span). docs/ingest.md has the user-facing table.
 */
type ColumnDomain =
  /** Any string; a lone UTF-16 surrogate is replaced when the row is serialised (serialiseRow). */
  | { kind: 'text' }
  /** A string from a fixed set, with the value used when it is not one of them. */
  | { kind: 'enum'; values: ReadonlySet<string>; fallback: string }
  /** DateTime64(9) as `seconds.nanoseconds`, inside TIME_DOMAIN. */
  | { kind: 'time' }
  /** A whole number from min to max (UInt8/UInt32/UInt64/Int32 columns), with the value used outside. */
  | { kind: 'whole'; min: number; max: number; fallback: number }
  /** A finite Float64 not below 0 (money), else 0. */
  | { kind: 'amount' }
  /** A finite Float64 not below 0, or null. */
  | { kind: 'nullableAmount' }
  /** UInt64 as a decimal string (durations in ns: at most the time range's width). */
  | { kind: 'wholeText' }
  /** Maps, arrays and nested columns: each element is one of the above; sizes are bounded by the decoder's caps. */
  | { kind: 'composite' };

/** The domains conformRow looks at (text and composite values are held by SpanRow's type). */
type CheckedDomain = Exclude<ColumnDomain, { kind: 'text' } | { kind: 'composite' }>;

const text: ColumnDomain = { kind: 'text' };
const composite: ColumnDomain = { kind: 'composite' };
const tokens: ColumnDomain = { kind: 'whole', min: 0, max: MAX_TOKEN_COUNT, fallback: 0 };
const uint32: ColumnDomain = { kind: 'whole', min: 0, max: UINT32_MAX, fallback: UINT32_MAX };
/** A retention in days: 0 (kept) or what a policy allows; a larger value would keep a row longer than agreed. */
const retention: ColumnDomain = { kind: 'whole', min: 0, max: 3650, fallback: 0 };
const flag: ColumnDomain = { kind: 'whole', min: 0, max: 1, fallback: 1 };
const oneOf = (values: string[], fallback: string): ColumnDomain => ({ kind: 'enum', values: new Set(values), fallback });

export const SPAN_COLUMN_DOMAINS: { readonly [Column in keyof SpanRow]: ColumnDomain } = {
  tenant_id: text,
  project_id: text,
  trace_id: text,
  span_id: text,
  parent_span_id: text,
  trace_state: text,
  flags: uint32,
  name: text,
  kind: oneOf(['UNSPECIFIED', 'INTERNAL', 'SERVER', 'CLIENT', 'PRODUCER', 'CONSUMER'], 'UNSPECIFIED'),
  service_name: text,
  scope_name: text,
  scope_version: text,
  start_time: { kind: 'time' },
  end_time: { kind: 'time' },
  duration_ns: { kind: 'wholeText' },
  status_code: oneOf(['UNSET', 'OK', 'ERROR'], 'UNSET'),
  status_message: text,
  span_type: oneOf(
    ['RUN', 'AGENT', 'LLM', 'TOOL', 'RETRIEVAL', 'EMBEDDING', 'RERANK', 'GUARDRAIL', 'EVALUATION', 'CHAIN', 'HTTP', 'DB', 'OTHER'],
    'OTHER',
  ),
  convention: text,
  operation: text,
  session_id: text,
  user_id: text,
  run_id: text,
  agent_name: text,
  tool_name: text,
  model: text,
  model_requested: text,
  provider: text,
  tokens_input_uncached: tokens,
  tokens_cache_read: tokens,
  tokens_cache_write: tokens,
  tokens_output: tokens,
  tokens_reasoning: tokens,
  usage_is_aggregate: flag,
  cost_usd: { kind: 'amount' },
  cost_source: text,
  price_version: text,
  ttft_ms: { kind: 'nullableAmount' },
  error_type: text,
  iterations: { kind: 'whole', min: -1, max: INT32_MAX, fallback: -1 },
  attributes: composite,
  attribute_json_keys: composite,
  resource_attributes: composite,
  'events.time': composite,
  'events.name': composite,
  'events.attributes': composite,
  'links.trace_id': composite,
  'links.span_id': composite,
  'links.trace_state': composite,
  'links.attributes': composite,
  input: text,
  output: text,
  dropped_attributes_count: uint32,
  dropped_events_count: uint32,
  dropped_links_count: uint32,
  truncated: flag,
  redactions: uint32,
  retention_days: retention,
};

/**
 * The columns conformRow looks at. Text and composite columns are strings, maps and arrays by
 * SpanRow's type (the decoder caps their sizes and serialiseRow their characters): checking them
 * per row would double the guard's cost (measured in bench:ingest) for values TypeScript already holds.
 */
const CHECKED = (Object.entries(SPAN_COLUMN_DOMAINS) as Array<[keyof SpanRow, ColumnDomain]>).filter(
  (entry): entry is [keyof SpanRow, CheckedDomain] => entry[1].kind !== 'text' && entry[1].kind !== 'composite',
);
// Compared as strings: nanosToDateTime64 pads every time alike.
const MIN_TIME = nanosToDateTime64(TIME_DOMAIN.minNanos);
const MAX_TIME = nanosToDateTime64(TIME_DOMAIN.maxNanos);

/**
 * Brings every value of the row into its column's domain, in place, and returns the columns it
 * had to change (empty for every row a correct normaliser builds).
 */
export function conformRow(row: SpanRow): Array<keyof SpanRow> {
  let changed: Array<keyof SpanRow> | undefined;
  const values = row as unknown as Record<string, unknown>;
  for (const [column, domain] of CHECKED) {
    const value = values[column];
    const conformed = conform(value, domain);
    if (conformed !== value) {
      values[column] = conformed;
      (changed ??= []).push(column);
    }
  }
  return changed ?? [];
}

function conform(value: unknown, domain: CheckedDomain): unknown {
  switch (domain.kind) {
    case 'enum':
      return typeof value === 'string' && domain.values.has(value) ? value : domain.fallback;
    case 'time':
      // Times were range-checked before the 200; a time outside here is a bug, kept in range.
      if (typeof value !== 'string' || value.length !== MIN_TIME.length) return MIN_TIME;
      return value < MIN_TIME ? MIN_TIME : value > MAX_TIME ? MAX_TIME : value;
    case 'whole':
      return typeof value === 'number' && Number.isInteger(value) && value >= domain.min && value <= domain.max ? value : domain.fallback;
    case 'amount':
      return typeof value === 'number' && Number.isFinite(value) && value >= 0 ? value : 0;
    case 'nullableAmount':
      return value === null || (typeof value === 'number' && Number.isFinite(value) && value >= 0) ? value : null;
    case 'wholeText':
      return typeof value === 'string' && /^\d{1,20}$/.test(value) ? value : '0';
  }
}

/**
 * How JSON.stringify writes a lone surrogate (always lower-case hex; a whole pair is written as
 * the characters themselves). A literal backslash before "ud" in the text is written `\\ud` and
 * matches too: that row is only made well-formed for nothing.
 */
const LONE_SURROGATE_ESCAPE = '\\ud';

/**
 * One JSONEachRow line. ClickHouse refuses a lone surrogate's escape (it would be half a UTF-8
 * character), so a row with one is written again with every string and key made well-formed
 * (U+FFFD in place of the half), as the decoders already do for what they read.
 */
export function serialiseRow(row: SpanRow): string {
  const line = JSON.stringify(row);
  return line.includes(LONE_SURROGATE_ESCAPE) ? JSON.stringify(wellFormed(row)) : line;
}
