import { RECORDING_SCOPE, describeStatementChecks, expectScopedQueries, recordingClient } from '@spanforge/testing/sql';
import { ScopedClickHouse } from './scoped-clickhouse';
import { UsageRepository, usageRange } from './usage.repository';

/**
 * Every statement UsageRepository sends, as ClickHouse receives it through ScopedClickHouse, kept
 * in __snapshots__ so a change of SQL shows in review; one test per bucket size. The SQL runs
 * against real ClickHouse in test/integration/usage-quota.int-spec.ts.
 */

const FROM = '2026-11-01T00:00:00Z';
const TO = '2026-12-01T00:00:00Z';

describe('UsageRepository SQL', () => {
  const { client, record } = recordingClient();
  const repository = new UsageRepository(new ScopedClickHouse(client, RECORDING_SCOPE));

  it.each(['MINUTE', 'HOUR', 'DAY', 'WEEK', 'WHOLE'] as const)('usage by %s', async (granularity) => {
    // A day of minutes (a month of them is more buckets than a read answers).
    const to = granularity === 'MINUTE' ? '2026-11-02T00:00:00Z' : TO;
    expectScopedQueries(await record(() => repository.usage(usageRange(FROM, to, granularity))), 1);
  });
});

describe('usageRange', () => {
  it('defaults to one bucket for the whole range and refuses an empty or reversed range', () => {
    expect(usageRange(FROM, TO)).toEqual({ fromMs: Date.parse(FROM), toMs: Date.parse(TO), granularity: 'WHOLE' });
    expect(usageRange(FROM, TO, null).granularity).toBe('WHOLE');
    // AUTO: the finest granularity of at most 100 buckets (30 days: days).
    expect(usageRange(FROM, TO, 'AUTO').granularity).toBe('DAY');
    expect(() => usageRange(TO, FROM)).toThrow('from must be before to');
    expect(() => usageRange(FROM, FROM)).toThrow('from must be before to');
  });

  it('refuses more buckets than it answers, except the whole range', () => {
    expect(() => usageRange('2020-01-01T00:00:00Z', TO, 'HOUR')).toThrow(/more than 2000 hour buckets/);
    expect(usageRange('2020-01-01T00:00:00Z', TO, 'WHOLE').granularity).toBe('WHOLE');
  });
});

describeStatementChecks();
