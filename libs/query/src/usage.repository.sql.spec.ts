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

  it.each(['HOUR', 'DAY', 'MONTH'] as const)('usage by %s', async (granularity) => {
    expectScopedQueries(await record(() => repository.usage(usageRange(FROM, TO, granularity))), 1);
  });
});

describe('usageRange', () => {
  it('defaults to days and refuses an empty or reversed range', () => {
    expect(usageRange(FROM, TO)).toEqual({ fromMs: Date.parse(FROM), toMs: Date.parse(TO), granularity: 'DAY' });
    expect(() => usageRange(TO, FROM)).toThrow('from must be before to');
    expect(() => usageRange(FROM, FROM)).toThrow('from must be before to');
  });

  it('refuses more buckets than it answers, except months', () => {
    expect(() => usageRange('2020-01-01T00:00:00Z', TO, 'HOUR')).toThrow(/more than 2000 hour buckets/);
    expect(usageRange('2020-01-01T00:00:00Z', TO, 'MONTH').granularity).toBe('MONTH');
  });
});

describeStatementChecks();
