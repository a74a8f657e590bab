import { RECORDING_SCOPE, describeStatementChecks, expectScopedQueries, recordingClient } from '@spanforge/testing/sql';
import { ScopedClickHouse } from './scoped-clickhouse';
import { StatsRepository } from './stats.repository';
import type { TraceFilter } from './trace-filter';

/**
 * Every statement StatsRepository sends, as ClickHouse receives it through ScopedClickHouse, kept
 * in __snapshots__ so a change of SQL shows in review. One test per method and statement shape;
 * the SQL itself runs against real ClickHouse in the query integration tests.
 */

const RANGE = { from: '2026-11-20T00:00:00Z', to: '2026-11-27T00:00:00Z' };
/** A range and more: the spans are then those of the traces the rest of the filter picks. */
const FILTER: TraceFilter = {
  ...RANGE,
  userId: 'user-1',
  hasError: false,
  model: 'gpt-4o-mini',
  attributes: [{ key: 'tier', value: 'gold' }],
  feedback: { name: 'helpful', max: 2 },
};

describe('StatsRepository SQL', () => {
  // Two current hours in the range and one stale: every part of the span figures read (hour rows, minute rows, facts).
  const hours = [
    { hour_ms: Date.parse('2026-11-20T10:00:00Z'), current: 1 },
    { hour_ms: Date.parse('2026-11-20T11:00:00Z'), current: 0 },
    { hour_ms: Date.parse('2026-11-20T12:00:00Z'), current: 1 },
  ];
  const { client, record } = recordingClient((queryId) => (queryId === 'query.span_hours_with_data' ? hours : []));
  const repository = new StatsRepository(new ScopedClickHouse(client, RECORDING_SCOPE));

  it('spanTypeStats: no filter', async () => {
    expectScopedQueries(await record(() => repository.spanTypeStats(undefined)), 2);
  });

  it('spanTypeStats: a time range only', async () => {
    expectScopedQueries(await record(() => repository.spanTypeStats(RANGE)), 2);
  });

  it('spanTypeStats: a range and trace filters', async () => {
    expectScopedQueries(await record(() => repository.spanTypeStats(FILTER)), 1);
  });

  it('modelStats: no filter', async () => {
    expectScopedQueries(await record(() => repository.modelStats(undefined)), 2);
  });

  it('modelStats: a time range only', async () => {
    expectScopedQueries(await record(() => repository.modelStats(RANGE)), 2);
  });

  it('modelStats: a range and trace filters', async () => {
    expectScopedQueries(await record(() => repository.modelStats(FILTER)), 1);
  });

  it('ingestMinutes: no range', async () => {
    expectScopedQueries(await record(() => repository.ingestMinutes(undefined)), 1);
  });

  it('ingestMinutes: from and to', async () => {
    expectScopedQueries(await record(() => repository.ingestMinutes(RANGE)), 1);
  });
});

describeStatementChecks();
