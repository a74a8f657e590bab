import { badInput } from '@spanforge/errors';

/** ClickHouse DateTime64 text ('2026-11-02 12:00:00.123456789') → ISO-8601 UTC with Z, millisecond precision. */
export function isoOf(clickhouseTime: string): string {
  return `${clickhouseTime.slice(0, 10)}T${clickhouseTime.slice(11, 23).padEnd(12, '.000').slice(0, 12)}Z`;
}

/** Milliseconds since the epoch of a ClickHouse DateTime64 text. */
export function msOf(clickhouseTime: string): number {
  return Date.parse(isoOf(clickhouseTime));
}

/** The days ClickHouse's Date holds: 1970-01-01 up to the start of 2149-06-06. */
export const FIRST_STORABLE_MS = 0;
export const LAST_STORABLE_MS = Date.UTC(2149, 5, 6);

/**
 * An ISO-8601 instant from a user → milliseconds since the epoch, or a BAD_USER_INPUT error naming
 * the field. Clamped to the days ClickHouse's Date holds: outside them a day bound would wrap around
 * (`toDate` of 1969-12-31 is 2149-06-06), and no span starts there (OTLP times count from 1970).
 * So "from 1900" means from the first span, and "to 9999-12-31" up to the last.
 */
export function parseInstant(value: string | Date | undefined, field: string): number | undefined {
  if (value === undefined || value === null) return undefined;
  const ms = value instanceof Date ? value.getTime() : Date.parse(value);
  if (!Number.isFinite(ms)) throw badInput(`${field} is not an ISO-8601 date-time`);
  return Math.min(Math.max(ms, FIRST_STORABLE_MS), LAST_STORABLE_MS);
}

/** Opaque pagination cursors: base64url of a JSON tuple, checked on the way back in. */
export function encodeCursor(values: Array<string | number>): string {
  return Buffer.from(JSON.stringify(values)).toString('base64url');
}

export function decodeCursor(cursor: string | undefined | null, shape: Array<'string' | 'number'>): Array<string | number> | undefined {
  if (cursor === undefined || cursor === null || cursor === '') return undefined;
  let values: unknown;
  try {
    values = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8'));
  } catch {
    throw badInput('`after` is not a cursor this API returned');
  }
  if (!Array.isArray(values) || values.length !== shape.length || values.some((v, i) => typeof v !== shape[i])) {
    throw badInput('`after` is not a cursor this API returned');
  }
  return values as Array<string | number>;
}

/** Page sizes: default 20, at most 200 (a larger `first` is refused, not silently cut). */
export function pageSize(first: number | undefined | null, max = 200): number {
  if (first === undefined || first === null) return 20;
  if (!Number.isInteger(first) || first < 1 || first > max) throw badInput(`first must be between 1 and ${max}`);
  return first;
}

/**
 * A USD amount as the API shows it: to 1e-10 USD, so sums of float prices read 0.002145, not
 * 0.0021449999999999998 (the cheapest token costs ~1e-8, so nothing real is lost). Amounts of a
 * 100,000 USD and more are left as they are: scaled, they would near 2^53.
 */
export function usd(amount: number | string): number {
  const value = Number(amount);
  return Math.abs(value) < 1e5 ? Math.round(value * 1e10) / 1e10 : value;
}
