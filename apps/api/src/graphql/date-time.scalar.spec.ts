import { GraphQLError, Kind } from 'graphql';
import { DateTimeScalar } from './date-time.scalar';

describe('DateTime scalar (ISO-8601 UTC strings with Z)', () => {
  it('writes Dates as ISO-8601 UTC with Z, and passes strings already in that form through', () => {
    expect(DateTimeScalar.serialize(new Date(Date.UTC(2026, 10, 30, 8, 11, 39, 123)))).toBe('2026-11-30T08:11:39.123Z');
    expect(DateTimeScalar.serialize('2026-11-30T08:11:39.123Z')).toBe('2026-11-30T08:11:39.123Z');
    expect(DateTimeScalar.serialize('2026-11-30T08:11:39Z')).toBe('2026-11-30T08:11:39Z');
  });

  it.each([
    ['a local time', '2026-11-30 08:11:39'],
    ['an offset time', '2026-11-30T09:11:39+01:00'],
    ['an invalid Date', new Date('nope')],
    ['a number', 1764490299000],
  ])('refuses to write %s as a DateTime', (_what, value) => {
    expect(() => DateTimeScalar.serialize(value)).toThrow(/DateTime cannot represent/);
  });

  it('reads any ISO-8601 date-time with a zone, as the instant it names', () => {
    expect(DateTimeScalar.parseValue('2026-11-30T08:00:00Z')).toEqual(new Date(Date.UTC(2026, 10, 30, 8)));
    expect(DateTimeScalar.parseValue('2026-11-30T09:00:00+01:00')).toEqual(new Date(Date.UTC(2026, 10, 30, 8)));
    expect(DateTimeScalar.parseValue('2026-11-30T08:00:00.123456789Z')).toEqual(new Date(Date.UTC(2026, 10, 30, 8, 0, 0, 123)));
    expect(DateTimeScalar.parseLiteral({ kind: Kind.STRING, value: '2026-11-30T08:00Z' })).toEqual(new Date(Date.UTC(2026, 10, 30, 8)));
  });

  it.each([
    ['2028-02-29T12:00:00Z', Date.UTC(2028, 1, 29, 12)],
    ['2000-02-29T00:00:00Z', Date.UTC(2000, 1, 29)],
    ['2026-12-31T23:59:59Z', Date.UTC(2026, 11, 31, 23, 59, 59)],
  ])('reads the calendar edge %s', (text, ms) => {
    expect(DateTimeScalar.parseValue(text)).toEqual(new Date(ms));
  });

  it.each([
    ['a date without a time', '2026-11-30'],
    ['a time without a zone', '2026-11-30T08:00:00'],
    ['an impossible day', '2026-02-30T08:00:00Z'],
    ['29 February of a common year', '2026-02-29T08:00:00Z'],
    ['29 February of a century year not divisible by 400', '2100-02-29T08:00:00Z'],
    ['31 April', '2026-04-31T08:00:00Z'],
    ['month 13', '2026-13-01T08:00:00Z'],
    ['day 0', '2026-11-00T08:00:00Z'],
    ['words', 'yesterday'],
    ['SQL', "2026-11-30T08:00:00Z' OR 1=1 --"],
    ['a number', 1764490299000],
  ])('refuses %s as BAD_USER_INPUT, naming the value', (_what, value) => {
    let error: unknown;
    try {
      DateTimeScalar.parseValue(value);
    } catch (caught) {
      error = caught;
    }
    expect(error).toBeInstanceOf(GraphQLError);
    expect((error as GraphQLError).extensions.code).toBe('BAD_USER_INPUT');
    expect((error as GraphQLError).message).toContain(JSON.stringify(value));
  });

  it('refuses a literal that is not a string', () => {
    expect(() => DateTimeScalar.parseLiteral({ kind: Kind.INT, value: '1764490299' })).toThrow(/must be a string/);
  });
});
