import { badInput } from '@spanforge/errors';

/*
 * The time axis of a `metrics` answer: bucket starts from the bucket holding `from` up to `to`, in
 * an IANA time zone. MINUTE and HOUR buckets are fixed lengths; DAY and WEEK buckets start at local
 * midnight (WEEK on Monday), so across a daylight-saving change a day lasts 23 or 25 hours. The
 * SQL buckets rows with ClickHouse's own time-zone functions (bucketSql); this file lists the same
 * starts so every bucket gets a point, data or not.
 */

export type Granularity = 'MINUTE' | 'HOUR' | 'DAY' | 'WEEK';

/** AUTO picks the finest granularity that gives at most this many buckets. */
export const AUTO_MAX_BUCKETS = 100;
/** A query may ask for at most this many buckets (e.g. 10 days of minutes is 14,400: refused). */
export const MAX_BUCKETS = 2_000;

const MINUTE_MS = 60_000;
const HOUR_MS = 3_600_000;
const DAY_MS = 86_400_000;

/** The zone, checked: an IANA name the runtime knows (ClickHouse ships the same tz database). */
export function checkTimeZone(zone: string | undefined | null): string {
  if (zone === undefined || zone === null || zone === '') return 'UTC';
  if (zone.length > 64 || !/^[A-Za-z0-9_+\-/]+$/.test(zone))
    throw badInput(`timezone "${zone.slice(0, 64)}" is not an IANA time zone name`);
  try {
    return new Intl.DateTimeFormat('en-US', { timeZone: zone }).resolvedOptions().timeZone;
  } catch {
    throw badInput(`timezone "${zone}" is not an IANA time zone name (e.g. Europe/Paris, America/New_York, UTC)`);
  }
}

/** The finest granularity whose buckets over [from, to) number at most AUTO_MAX_BUCKETS. */
export function autoGranularity(from: number, to: number): Granularity {
  const span = to - from;
  if (span / MINUTE_MS <= AUTO_MAX_BUCKETS) return 'MINUTE';
  if (span / HOUR_MS <= AUTO_MAX_BUCKETS) return 'HOUR';
  if (span / DAY_MS <= AUTO_MAX_BUCKETS) return 'DAY';
  return 'WEEK';
}

/** Every bucket start (ms since the epoch) of [from, to): the first one holds `from`. */
export function bucketStarts(from: number, to: number, granularity: Granularity, zone: string): number[] {
  const starts: number[] = [];
  let at = bucketStart(from, granularity, zone);
  while (at < to) {
    starts.push(at);
    if (starts.length > MAX_BUCKETS)
      throw badInput(
        `the range holds more than ${MAX_BUCKETS} ${granularity.toLowerCase()} buckets: choose a coarser granularity (or AUTO) or a shorter range`,
      );
    at = nextBucket(at, granularity, zone);
  }
  return starts;
}

/** Whether the zone is a whole number of hours from UTC over the range (then its hours are UTC hours). */
export function hasWholeHourOffsets(zone: string, from: number, to: number): boolean {
  return [from, (from + to) / 2, to].every((ms) => offsetMs(ms, zone) % HOUR_MS === 0);
}

/** The start of the bucket holding `ms`. */
export function bucketStart(ms: number, granularity: Granularity, zone: string): number {
  switch (granularity) {
    case 'MINUTE':
      return Math.floor(ms / MINUTE_MS) * MINUTE_MS;
    case 'HOUR':
      // Local hours: in a zone offset by a half hour from UTC, an hour starts at :30 UTC.
      return ms - ((((ms + offsetMs(ms, zone)) % HOUR_MS) + HOUR_MS) % HOUR_MS);
    case 'DAY': {
      const local = localParts(ms, zone);
      return localMidnight(local.year, local.month, local.day, zone);
    }
    case 'WEEK': {
      const local = localParts(ms, zone);
      const weekday = (new Date(Date.UTC(local.year, local.month - 1, local.day)).getUTCDay() + 6) % 7; // Monday = 0
      return localMidnight(local.year, local.month, local.day - weekday, zone);
    }
  }
}

function nextBucket(start: number, granularity: Granularity, zone: string): number {
  switch (granularity) {
    case 'MINUTE':
      return start + MINUTE_MS;
    case 'HOUR':
      return bucketStart(start + HOUR_MS + MINUTE_MS, 'HOUR', zone);
    case 'DAY':
    case 'WEEK': {
      // The local date of the start, plus one or seven days, at its local midnight.
      const local = localParts(start, zone);
      return localMidnight(local.year, local.month, local.day + (granularity === 'DAY' ? 1 : 7), zone);
    }
  }
}

/** The instant of 00:00 local time on that date (day may overflow the month, as Date.UTC allows). */
function localMidnight(year: number, month: number, day: number, zone: string): number {
  const wall = Date.UTC(year, month - 1, day);
  // The offset at the guess, then at the corrected instant: right on both sides of a change.
  let instant = wall - offsetMs(wall, zone);
  instant = wall - offsetMs(instant, zone);
  // A zone that skips midnight (a change at 00:00) starts the day at the first instant that exists.
  const parts = localParts(instant, zone);
  if (Date.UTC(parts.year, parts.month - 1, parts.day) < wall) instant += HOUR_MS;
  return instant;
}

const formatters = new Map<string, Intl.DateTimeFormat>();

function formatter(zone: string): Intl.DateTimeFormat {
  let format = formatters.get(zone);
  if (!format) {
    format = new Intl.DateTimeFormat('en-US', {
      timeZone: zone,
      hourCycle: 'h23',
      year: 'numeric',
      month: '2-digit',
      day: '2-digit',
      hour: '2-digit',
      minute: '2-digit',
      second: '2-digit',
    });
    if (formatters.size > 500) formatters.clear();
    formatters.set(zone, format);
  }
  return format;
}

interface LocalParts {
  year: number;
  month: number;
  day: number;
  hour: number;
  minute: number;
  second: number;
}

function localParts(ms: number, zone: string): LocalParts {
  const parts: Record<string, number> = {};
  for (const part of formatter(zone).formatToParts(new Date(ms))) if (part.type !== 'literal') parts[part.type] = Number(part.value);
  return { year: parts.year!, month: parts.month!, day: parts.day!, hour: parts.hour!, minute: parts.minute!, second: parts.second! };
}

/** Local time minus UTC at that instant, in ms (whole seconds). */
function offsetMs(ms: number, zone: string): number {
  const local = localParts(ms, zone);
  const wall = Date.UTC(local.year, local.month - 1, local.day, local.hour, local.minute, local.second);
  return wall - Math.floor(ms / 1000) * 1000;
}
