/**
 * What the span store can hold, in one place: the gateway's validation (before it answers 200),
 * the worker's normaliser and the row builder all read these bounds, so a value the store would
 * refuse is rejected or converted before it is queued, never discovered by a failing insert.
 * docs/ingest.md lists them for users.
 */

const NS_PER_DAY = 86_400_000_000_000n;

/**
 * Span, event and trace times, in nanoseconds since the Unix epoch.
 *
 * - From 1970-01-01T00:00:00Z: OTLP times are unsigned, and 0 means "not set".
 * - Up to 2149-06-06T23:59:59.999999999Z: the rollups file spans under their day (ClickHouse
 *   `Date`, 1970-01-01 to 2149-06-06), and a later day wraps around to 1970 instead of failing.
 *   The span columns (`DateTime64(9)`) would hold times up to 2262-04-11.
 */
export const TIME_DOMAIN = {
  minNanos: 0n,
  maxNanos: 65_536n * NS_PER_DAY - 1n,
  description: '1970-01-01T00:00:00Z to 2149-06-06T23:59:59.999999999Z',
} as const;

export function isStorableTime(nanos: bigint): boolean {
  return nanos >= TIME_DOMAIN.minNanos && nanos <= TIME_DOMAIN.maxNanos;
}

/**
 * The largest token count one span may state in one bucket (input, cache read, cache write,
 * output, reasoning): 2^32 − 1, a thousand times the largest context window of 2026. A count
 * beyond it is a sender's bug, and summing such counts would outgrow the UInt64 sums and the 2^53
 * of a JSON number; it is not counted. Fractional counts are rounded to the nearest whole token.
 */
export const MAX_TOKEN_COUNT = 4_294_967_295;

/** A stated cost (USD) above this is not a real call's cost; it is not counted (as for tokens). */
export const MAX_SPAN_COST_USD = 1_000_000;

export const INT32_MAX = 2_147_483_647;
export const UINT32_MAX = 4_294_967_295;

/**
 * A token count as stored: the nearest whole number, or undefined when the value is not a count
 * (negative, not finite, or over MAX_TOKEN_COUNT).
 */
export function tokenCount(value: number): number | undefined {
  if (!(value >= 0 && value <= MAX_TOKEN_COUNT)) return undefined;
  return Math.round(value);
}

/**
 * A JSON-shaped value with every string and object key made well-formed UTF-16: a lone surrogate
 * (half a character, from a `\uD83D` escape without its pair) becomes U+FFFD. A store that keeps
 * UTF-8 cannot hold half a character, and ClickHouse refuses the whole insert over one.
 */
export function wellFormed(value: unknown): unknown {
  if (typeof value === 'string') return value.toWellFormed();
  if (Array.isArray(value)) return value.map(wellFormed);
  if (value === null || typeof value !== 'object') return value;
  const copy: Record<string, unknown> = {};
  for (const [key, inner] of Object.entries(value)) copy[key.toWellFormed()] = wellFormed(inner);
  return copy;
}
