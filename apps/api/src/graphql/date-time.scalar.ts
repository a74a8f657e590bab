import { GraphQLError, GraphQLScalarType, Kind } from 'graphql';
import { ErrorCode } from '@spanforge/errors';

/** An ISO-8601 UTC instant as the API writes it: `2026-11-30T08:11:39.123Z` (fractions optional). */
const UTC_INSTANT = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d{1,9})?Z$/;
/** What the API reads: an ISO-8601 date-time with a zone, `Z` or an offset. */
const ZONED_INSTANT = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d{1,9})?)?(Z|[+-]\d{2}:\d{2})$/;

function invalid(message: string): GraphQLError {
  return new GraphQLError(message, { extensions: { code: ErrorCode.BAD_USER_INPUT } });
}

const DAYS_IN_MONTH = [31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31];

/** Whether the calendar has this day (Date.parse rolls 2026-02-30 over to March instead of refusing it). */
function dayExists(year: number, month: number, day: number): boolean {
  if (month < 1 || month > 12 || day < 1) return false;
  const leap = month === 2 && year % 4 === 0 && (year % 100 !== 0 || year % 400 === 0);
  return day <= DAYS_IN_MONTH[month - 1]! + (leap ? 1 : 0);
}

/** The number written in value[from, to), digits only (the pattern checked them). */
function digits(value: string, from: number, to: number): number {
  let n = 0;
  for (let i = from; i < to; i++) n = n * 10 + value.charCodeAt(i) - 48;
  return n;
}

/** Parsed on every request that passes a time (twice: Mercurius checks variables, then the compiled query coerces them), so it allocates only the Date. */
function parse(value: unknown): Date {
  if (typeof value !== 'string' || !ZONED_INSTANT.test(value)) {
    throw invalid(`DateTime must be an ISO-8601 date-time with a zone, such as 2026-11-30T08:00:00Z; got ${JSON.stringify(value)}`);
  }
  const ms = Date.parse(value);
  if (Number.isNaN(ms) || !dayExists(digits(value, 0, 4), digits(value, 5, 7), digits(value, 8, 10))) {
    throw invalid(`DateTime ${JSON.stringify(value)} is not a real instant`);
  }
  return new Date(ms);
}

/**
 * Times in answers are ISO-8601 UTC strings with `Z` (`DateTime`, docs/api.md). Out: a Date, or a
 * string already in that form (span times keep the milliseconds ClickHouse gave them). In: any
 * ISO-8601 date-time with a zone, as a Date; anything else is BAD_USER_INPUT, naming the value.
 * (Nest's own DateTime scalar turns strings into null and lets "Invalid Date" through.)
 */
export const DateTimeScalar = new GraphQLScalarType({
  name: 'DateTime',
  description:
    'An instant as an ISO-8601 UTC string with Z, such as 2026-11-30T08:11:39.123Z. Inputs take any ISO-8601 date-time with a zone.',
  serialize(value) {
    if (value instanceof Date && !Number.isNaN(value.getTime())) return value.toISOString();
    if (typeof value === 'string' && UTC_INSTANT.test(value)) return value;
    throw new TypeError(`DateTime cannot represent ${String(value)}`);
  },
  parseValue: parse,
  parseLiteral(ast) {
    if (ast.kind !== Kind.STRING) throw invalid('DateTime must be a string, such as "2026-11-30T08:00:00Z"');
    return parse(ast.value);
  },
});
