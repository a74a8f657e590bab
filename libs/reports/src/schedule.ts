import { CronExpressionParser } from 'cron-parser';

/**
 * Report schedules: when a schedule fires and which window each firing reports on.
 *
 * Cron: exactly five fields, `minute hour day-of-month month day-of-week`, evaluated in the
 * schedule's IANA time zone by cron-parser. Seconds (a sixth field) are refused: reports are
 * minute-grained, and five fields means the same thing to every cron reader a user knows. Jenkins'
 * `H` is refused because cron-parser draws it at random on each parse, so two workers would
 * disagree on the fire times. `@daily`-style aliases are refused (they expand to six fields).
 * When day-of-month and day-of-week are both restricted either one matching fires (Vixie cron).
 *
 * DST (cron-parser's behaviour, pinned by schedule.spec.ts): a local time skipped by the
 * spring-forward gap fires at the same wall-clock distance after the gap (02:30 → 03:30); a local
 * time repeated at fall-back fires once, at its first occurrence; a wildcard-hour cron keeps
 * firing every elapsed hour.
 */

const MINUTE_MS = 60_000;
const DAY_MS = 86_400_000;

/** Shortest window: the cron's own granularity. */
export const MIN_WINDOW_MS = MINUTE_MS;
/** Longest window: a quarter of 31-day months, so quarterly reports fit; longer scans belong in ad-hoc queries. */
export const MAX_WINDOW_MS = 93 * DAY_MS;
/** Most windows `dueWindows` returns per call, so a long downtime under a busy cron catches up in bounded batches. */
export const DUE_WINDOWS_CAP = 100;

const CRON_EXAMPLE = 'five fields "minute hour day-of-month month day-of-week", e.g. "0 9 * * *"';
const MAX_CRON_LENGTH = 200;

export interface ReportSchedule {
  cron: string;
  timezone: string;
  windowMs: number;
  createdAt: Date;
}

export interface ReportWindow {
  start: Date;
  end: Date;
}

/** A problem with the cron expression, phrased for the user, or undefined when it is valid. */
export function validateCron(expr: string): string | undefined {
  if (typeof expr !== 'string' || expr.trim() === '') return `cron expression is empty; expected ${CRON_EXAMPLE}`;
  if (expr.length > MAX_CRON_LENGTH) return `cron expression is longer than ${MAX_CRON_LENGTH} characters`;
  const fields = expr.trim().split(/\s+/);
  if (fields.length !== 5) {
    const seconds = fields.length === 6 ? ' (a seconds field is not supported)' : '';
    return `cron expression "${expr}" has ${fields.length} field${fields.length === 1 ? '' : 's'}${seconds}; expected ${CRON_EXAMPLE}`;
  }
  // No month or weekday name starts with H, so a list item starting with it is Jenkins' hash.
  if (fields.some((field) => field.split(',').some((item) => /^h/i.test(item)))) {
    return `cron expression "${expr}" uses H (hashed values), which is not supported; write the minute or hour explicitly`;
  }
  try {
    // next() as well as parse: some impossible combinations only fail when a date is searched for.
    CronExpressionParser.parse(expr, { tz: 'UTC', currentDate: 0 }).next();
  } catch (error) {
    return `cron expression "${expr}" is invalid: ${error instanceof Error ? error.message : String(error)}`;
  }
  return undefined;
}

/**
 * The shortest a schedule may fire: more often would let one project keep the report workers (a
 * few, shared by every project) busy with its own reports.
 */
export const MIN_SCHEDULE_INTERVAL_MS = 15 * 60_000;
/** Firings looked at to find a cron's shortest gap (irregular crons: "0,5 9 * * *" has a 5-minute one). */
const FIRINGS_EXAMINED = 200;

/** A problem when a valid cron fires more often than MIN_SCHEDULE_INTERVAL_MS, or undefined. */
export function validateCronFrequency(expr: string): string | undefined {
  const firings = CronExpressionParser.parse(expr, { tz: 'UTC', currentDate: 0 });
  let previous = firings.next().getTime();
  let shortest = Infinity;
  for (let i = 0; i < FIRINGS_EXAMINED && firings.hasNext(); i++) {
    const at = firings.next().getTime();
    shortest = Math.min(shortest, at - previous);
    previous = at;
  }
  if (shortest >= MIN_SCHEDULE_INTERVAL_MS) return undefined;
  return `cron expression "${expr}" fires every ${Math.round(shortest / 60_000)} minute(s) at its most frequent; a report schedule may fire at most every ${MIN_SCHEDULE_INTERVAL_MS / 60_000} minutes`;
}

/**
 * A problem with the time zone, or undefined. IANA names only (any case; store `canonicalTimezone`):
 * fixed offsets such as "+01:00" are refused although Intl accepts them, because the same zone is
 * used for DAY grouping in ClickHouse, which knows only tz database names.
 */
export function validateTimezone(tz: string): string | undefined {
  const example = 'an IANA time zone name such as "Europe/Lisbon", "America/New_York" or "UTC"';
  if (typeof tz !== 'string' || tz.trim() === '') return `timezone is empty; expected ${example}`;
  if (/^[+-]/.test(tz)) return `timezone "${tz}" is a UTC offset; expected ${example} (offsets do not follow daylight saving time)`;
  try {
    new Intl.DateTimeFormat(undefined, { timeZone: tz });
  } catch {
    return `timezone "${tz}" is not known; expected ${example}`;
  }
  return undefined;
}

/** The tz database spelling of a valid zone ("europe/lisbon" → "Europe/Lisbon"); throws RangeError when invalid. */
export function canonicalTimezone(tz: string): string {
  const problem = validateTimezone(tz);
  if (problem) throw new RangeError(problem);
  return new Intl.DateTimeFormat(undefined, { timeZone: tz }).resolvedOptions().timeZone;
}

/** A problem with an ISO-8601 window duration, or undefined. See `parseWindow`. */
export function validateWindow(window: string): string | undefined {
  const read = readWindow(window);
  return 'problem' in read ? read.problem : undefined;
}

/**
 * An ISO-8601 duration as milliseconds: `PT30M`, `PT1H`, `P1D`, `P7D`, `P1W`, `P1DT12H`.
 * Whole numbers of weeks (alone), days, hours, minutes and seconds, case-insensitive. Years and
 * months are refused (no fixed length), as are fractions, signs, zero, less than PT1M and more than
 * P93D. A day is 24 h of elapsed time, so across a DST change a P1D window is 24 h, not the local
 * calendar day. Throws RangeError with the problem; `validateWindow` returns it instead.
 */
export function parseWindow(window: string): number {
  const read = readWindow(window);
  if ('problem' in read) throw new RangeError(read.problem);
  return read.ms;
}

const DURATION = /^P(?:(\d+)W|(?:(\d+)D)?(?:T(?:(\d+)H)?(?:(\d+)M)?(?:(\d+)S)?)?)$/;
const UNIT_MS = [7 * DAY_MS, DAY_MS, 3_600_000, MINUTE_MS, 1_000];

function readWindow(window: string): { ms: number } | { problem: string } {
  const example = 'an ISO-8601 duration such as PT30M, PT1H, P1D or P1W';
  if (typeof window !== 'string' || window.trim() === '') return { problem: `window is empty; expected ${example}` };
  const text = window.trim().toUpperCase();
  const quoted = `window "${window}"`;
  if (text.startsWith('-')) return { problem: `${quoted} is negative; a window is a positive duration such as P1D` };
  if (/^P[^T]*[YM]/.test(text))
    return { problem: `${quoted} uses years or months, which have no fixed length; use days or weeks, e.g. P30D` };
  if (/[.,]/.test(text)) return { problem: `${quoted} has a fraction; use whole units, e.g. PT90M instead of PT1.5H` };
  const match = DURATION.exec(text);
  // "P" and "PT" match the pattern with every unit absent; they are not durations either.
  if (!match || text === 'P' || text.endsWith('T'))
    return { problem: `${quoted} is not ${example} (weeks cannot be combined with other units)` };
  const ms = match.slice(1).reduce((sum, amount, unit) => sum + (amount === undefined ? 0 : Number(amount) * UNIT_MS[unit]), 0);
  if (ms === 0) return { problem: `${quoted} is zero; a window must be at least PT1M` };
  if (ms < MIN_WINDOW_MS) return { problem: `${quoted} is shorter than the minimum of one minute (PT1M)` };
  if (ms > MAX_WINDOW_MS) return { problem: `${quoted} is longer than the maximum of 93 days (P93D)` };
  return { ms };
}

/**
 * The schedule's fire instants t with afterExclusive < t ≤ untilInclusive, oldest first, at most
 * `max`. Throws RangeError for an invalid cron or time zone (schedules are validated when saved, so
 * here it is a bug or a tz database change, not user input).
 */
export function fireTimes(cron: string, timezone: string, afterExclusive: Date, untilInclusive: Date, max = 1000): Date[] {
  const problem = validateCron(cron) ?? validateTimezone(timezone);
  if (problem) throw new RangeError(problem);
  // cron-parser's currentDate is exclusive: a fire exactly at afterExclusive is not returned.
  const expression = CronExpressionParser.parse(cron, { tz: timezone, currentDate: afterExclusive });
  const fires: Date[] = [];
  while (fires.length < max) {
    const fire = expression.next().toDate();
    if (fire.getTime() > untilInclusive.getTime()) break;
    fires.push(fire);
  }
  return fires;
}

/** The window a firing reports on: [fire − window, fire), so a report covers time that has fully passed. */
export function reportWindow(fireTime: Date, windowMs: number): ReportWindow {
  return { start: new Date(fireTime.getTime() - windowMs), end: new Date(fireTime.getTime()) };
}

/**
 * Every window still to produce, oldest first: one per fire time after `lastWindowEnd` (the end of
 * the newest window already produced, which is its fire time) or, before the first report, after
 * the schedule's `createdAt`, up to and including `now`. Windows are keyed by their end, so a caller
 * that records each window before moving on never produces one twice and never skips one.
 *
 * At most DUE_WINDOWS_CAP (100) are returned: the oldest ones. Nothing past the cap is dropped; once
 * the caller has recorded them, the next call (with the new lastWindowEnd) returns the following
 * batch. A result of exactly DUE_WINDOWS_CAP windows means "call again".
 */
export function dueWindows(schedule: ReportSchedule, lastWindowEnd: Date | null, now: Date): ReportWindow[] {
  const after = lastWindowEnd ?? schedule.createdAt;
  return fireTimes(schedule.cron, schedule.timezone, after, now, DUE_WINDOWS_CAP).map((fire) => reportWindow(fire, schedule.windowMs));
}
