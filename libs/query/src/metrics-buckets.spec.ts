import { DomainError } from '@spanforge/errors';
import { autoGranularity, bucketStart, bucketStarts, checkTimeZone } from './metrics-buckets';

const at = (iso: string) => Date.parse(iso);
const iso = (ms: number) => new Date(ms).toISOString();
const HOUR = 3_600_000;

describe('metrics buckets', () => {
  it('starts DAY buckets at local midnight: 23 and 25 hours across the daylight-saving changes', () => {
    // Europe/Paris: summer time from 2026-03-29 02:00 (+01 → +02), back on 2026-10-25 03:00.
    const spring = bucketStarts(at('2026-03-28T00:00:00Z'), at('2026-03-31T00:00:00Z'), 'DAY', 'Europe/Paris');
    expect(spring.map(iso)).toStrictEqual([
      '2026-03-27T23:00:00.000Z',
      '2026-03-28T23:00:00.000Z',
      '2026-03-29T22:00:00.000Z',
      '2026-03-30T22:00:00.000Z',
    ]);
    expect((spring[2]! - spring[1]!) / HOUR).toBe(23);
    const autumn = bucketStarts(at('2026-10-24T22:00:00Z'), at('2026-10-26T23:00:00Z'), 'DAY', 'Europe/Paris');
    expect(autumn.map(iso)).toStrictEqual(['2026-10-24T22:00:00.000Z', '2026-10-25T23:00:00.000Z']);
    expect((autumn[1]! - autumn[0]!) / HOUR).toBe(25);
  });

  it('starts WEEK buckets on Monday local midnight', () => {
    // 2026-12-01 is a Tuesday; New York is at -05 in December.
    expect(bucketStarts(at('2026-12-01T12:00:00Z'), at('2026-12-15T00:00:00Z'), 'WEEK', 'America/New_York').map(iso)).toStrictEqual([
      '2026-11-30T05:00:00.000Z',
      '2026-12-07T05:00:00.000Z',
      '2026-12-14T05:00:00.000Z',
    ]);
  });

  it('starts HOUR buckets on local hours, at :30 UTC in a zone offset by half an hour', () => {
    expect(bucketStarts(at('2026-12-01T10:00:00Z'), at('2026-12-01T12:00:00Z'), 'HOUR', 'Asia/Kolkata').map(iso)).toStrictEqual([
      '2026-12-01T09:30:00.000Z',
      '2026-12-01T10:30:00.000Z',
      '2026-12-01T11:30:00.000Z',
    ]);
    expect(bucketStart(at('2026-12-01T10:59:59Z'), 'HOUR', 'UTC')).toBe(at('2026-12-01T10:00:00Z'));
  });

  it('picks the finest granularity with at most 100 buckets for AUTO', () => {
    const from = at('2026-11-01T00:00:00Z');
    expect(autoGranularity(from, from + 90 * 60_000)).toBe('MINUTE');
    expect(autoGranularity(from, from + 2 * 24 * HOUR)).toBe('HOUR');
    expect(autoGranularity(from, from + 30 * 24 * HOUR)).toBe('DAY');
    expect(autoGranularity(from, from + 365 * 24 * HOUR)).toBe('WEEK');
  });

  it('refuses unknown zones and ranges with too many buckets', () => {
    expect(checkTimeZone(undefined)).toBe('UTC');
    expect(checkTimeZone('Europe/Paris')).toBe('Europe/Paris');
    expect(() => checkTimeZone('Mars/Olympus')).toThrow(DomainError);
    expect(() => checkTimeZone("UTC'; DROP")).toThrow(/not an IANA time zone/);
    expect(() => bucketStarts(at('2026-11-01T00:00:00Z'), at('2026-11-10T00:00:00Z'), 'MINUTE', 'UTC')).toThrow(
      /more than 2000 minute buckets/,
    );
  });
});
