import { parseInstant, usd } from './query.values';

const midnight = Date.UTC(2026, 10, 20);

describe('parseInstant', () => {
  it('reads ISO-8601 instants and Dates, clamped to 1970-01-01 … 2149-06-06', () => {
    expect(parseInstant('2026-11-20T05:30:00+01:00', 'filter.from')).toBe(Date.UTC(2026, 10, 20, 4, 30));
    expect(parseInstant(new Date(midnight), 'filter.from')).toBe(midnight);
    expect(parseInstant('1969-12-31T00:00:00Z', 'filter.from')).toBe(0);
    expect(parseInstant('9999-12-31T23:59:59Z', 'filter.to')).toBe(Date.UTC(2149, 5, 6));
    expect(parseInstant(undefined, 'filter.to')).toBeUndefined();
    expect(() => parseInstant('next tuesday', 'filter.to')).toThrow('filter.to is not an ISO-8601 date-time');
  });
});

describe('usd', () => {
  it('drops the float noise of summed prices and keeps every real digit', () => {
    expect(usd(0.0021449999999999998)).toBe(0.002145);
    expect(usd(0.033745000000000004)).toBe(0.033745);
    expect(usd(180.9527937000001)).toBe(180.9527937);
    expect(String(usd(0.1 + 0.2))).toBe('0.3');
    // One token of the cheapest model, and a sum beyond the scaled range, stay as they are.
    expect(usd(1e-8)).toBe(1e-8);
    expect(usd(123_456.7890123)).toBe(123_456.7890123);
    expect(usd('2.5')).toBe(2.5);
  });
});
