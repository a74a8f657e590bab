import { RECORDING_SCOPE, describeStatementChecks, expectScopedQueries, recordingClient } from '@spanforge/testing/sql';
import { AnalyticsRepository } from './analytics.repository';
import { ScopedClickHouse } from './scoped-clickhouse';
import type { TraceFilter } from './trace-filter';

/**
 * Every statement AnalyticsRepository sends, as ClickHouse receives it through ScopedClickHouse,
 * kept in __snapshots__ so a change of SQL shows in review. One test per method and statement
 * shape; the SQL itself runs against real ClickHouse in the query integration tests.
 */

const DAY = 86_400_000;
const HOUR = 3_600_000;
const midnight = Date.UTC(2026, 10, 20);
const iso = (ms: number) => new Date(ms).toISOString();

/** Every trace filter at once (two attributes, feedback with both bounds). */
const EVERY_FILTER: TraceFilter = {
  from: iso(midnight),
  to: iso(midnight + 7 * DAY),
  sessionId: 'session-1',
  userId: 'user-1',
  rootName: 'agent.run',
  hasError: true,
  minIterations: 2,
  maxIterations: 9,
  model: 'gpt-4o-mini',
  attributes: [
    { key: 'gen_ai.agent.name', value: 'support' },
    { key: 'tier', value: 'gold' },
  ],
  feedback: { name: 'helpful', min: 3, max: 5 },
};

/** The other branches of the filter: no error, attributes without a time range, feedback without bounds. */
const OTHER_BRANCHES: TraceFilter = { hasError: false, attributes: [{ key: 'tier', value: 'gold' }], feedback: { name: 'helpful' } };

describe('AnalyticsRepository SQL', () => {
  const { client, record } = recordingClient();
  const repository = new AnalyticsRepository(new ScopedClickHouse(client, RECORDING_SCOPE));

  it('latencyByIterations: no filter', async () => {
    expectScopedQueries(await record(() => repository.latencyByIterations(undefined)), 1);
  });

  it('latencyByIterations: every trace filter', async () => {
    expectScopedQueries(await record(() => repository.latencyByIterations(EVERY_FILTER)), 1);
  });

  it('latencyByIterations: no error, attributes without a range, feedback without bounds', async () => {
    expectScopedQueries(await record(() => repository.latencyByIterations(OTHER_BRANCHES)), 1);
  });

  it('costBreakdown daily: all time, from cost_daily', async () => {
    expectScopedQueries(await record(() => repository.costBreakdown(['MODEL', 'DAY'], undefined)), 1);
  });

  it('costBreakdown daily: whole days only, every daily dimension', async () => {
    const filter = { from: iso(midnight), to: iso(midnight + 3 * DAY) };
    expectScopedQueries(await record(() => repository.costBreakdown(['MODEL', 'PROVIDER', 'SPAN_TYPE', 'SERVICE', 'DAY'], filter)), 1);
  });

  it('costBreakdown daily and part days: a part day at both ends', async () => {
    const filter = { from: iso(midnight + 5.5 * HOUR), to: iso(midnight + 3 * DAY + HOUR) };
    expectScopedQueries(await record(() => repository.costBreakdown(['MODEL', 'DAY'], filter)), 1);
  });

  it('costBreakdown daily and part days: from only (part day at the start)', async () => {
    expectScopedQueries(await record(() => repository.costBreakdown(['PROVIDER'], { from: iso(midnight + 5.5 * HOUR) })), 1);
  });

  it('costBreakdown daily and part days: to only (part day at the end)', async () => {
    expectScopedQueries(await record(() => repository.costBreakdown(['SPAN_TYPE'], { to: iso(midnight + 3 * DAY + HOUR) })), 1);
  });

  it('costBreakdown part days: within one day', async () => {
    const filter = { from: iso(midnight + HOUR), to: iso(midnight + 2 * HOUR) };
    expectScopedQueries(await record(() => repository.costBreakdown(['MODEL'], filter)), 1);
  });

  it('costBreakdown part days: part minutes at both ends', async () => {
    const filter = { from: iso(midnight + HOUR + 30_000), to: iso(midnight + 2 * HOUR + 15_000) };
    expectScopedQueries(await record(() => repository.costBreakdown(['MODEL'], filter)), 1);
  });

  it('costBreakdown part days: two part days across midnight', async () => {
    const filter = { from: iso(midnight + 3 * HOUR), to: iso(midnight + DAY + 5 * HOUR) };
    expectScopedQueries(await record(() => repository.costBreakdown(['SERVICE', 'DAY'], filter)), 1);
  });

  it('costBreakdown general: a filter beyond the time range', async () => {
    const filter = { from: iso(midnight), to: iso(midnight + DAY), minIterations: 0 };
    expectScopedQueries(await record(() => repository.costBreakdown(['MODEL', 'DAY'], filter)), 1);
  });

  it('costBreakdown general: the SESSION dimension, every dimension, no filter', async () => {
    expectScopedQueries(
      await record(() => repository.costBreakdown(['SESSION', 'MODEL', 'PROVIDER', 'SPAN_TYPE', 'SERVICE', 'DAY'], undefined)),
      1,
    );
  });

  it('costBreakdown general: every trace filter', async () => {
    expectScopedQueries(await record(() => repository.costBreakdown(['MODEL'], EVERY_FILTER)), 1);
  });

  it('sessions: no filter, first page', async () => {
    expectScopedQueries(await record(() => repository.sessions(undefined, 20, undefined)), 2);
  });

  it('sessions: every filter, feedback with both bounds, after a cursor', async () => {
    const filter = { from: iso(midnight), to: iso(midnight + DAY), userId: 'user-1', feedback: { name: 'helpful', min: 1, max: 4 } };
    expectScopedQueries(await record(() => repository.sessions(filter, 20, [0.25, 'session-9'])), 2);
  });

  it('sessions: feedback without bounds', async () => {
    expectScopedQueries(await record(() => repository.sessions({ feedback: { name: 'helpful' } }, 20, undefined)), 2);
  });

  it('sessions without their total: one read, no count', async () => {
    const statements = await record(() => repository.sessions(undefined, 20, undefined, false));
    expectScopedQueries(statements, 1);
    expect(statements[0]!.queryId).toBe('query.sessions_page');
  });
});

describeStatementChecks();
