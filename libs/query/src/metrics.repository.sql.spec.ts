import { RECORDING_SCOPE, expectScopedQueries, recordingClient } from '@spanforge/testing/sql';
import { MetricsRepository } from './metrics.repository';
import { ScopedClickHouse } from './scoped-clickhouse';

/**
 * Every statement MetricsRepository sends, as ClickHouse receives it, kept in __snapshots__ so a
 * change of SQL shows in review: the choice of series, then (one series answered) their points.
 */

const RANGE = { from: '2026-11-01T00:00:00Z', to: '2026-11-08T00:00:00Z' };

describe('MetricsRepository SQL', () => {
  const answers: Record<string, unknown[]> = {
    'query.span_hours_with_data': [
      { hour_ms: Date.parse('2026-11-02T00:00:00Z'), current: 1 },
      { hour_ms: Date.parse('2026-11-02T01:00:00Z'), current: 0 },
    ],
  };
  const { client, record } = recordingClient((queryId) => answers[queryId] ?? []);
  const repository = new MetricsRepository(new ScopedClickHouse(client, RECORDING_SCOPE));

  it('SPANS by model, hourly in a zone, every measure, with a trace filter', async () => {
    expectScopedQueries(
      await record(() =>
        repository.metrics({
          view: 'SPANS',
          measures: [
            'COUNT',
            'ERROR_COUNT',
            'ERROR_RATE',
            'COST_USD',
            'INPUT_TOKENS',
            'OUTPUT_TOKENS',
            'DURATION_AVG_MS',
            'DURATION_P50_MS',
            'DURATION_P95_MS',
            'DURATION_P99_MS',
            'TTFT_P50_MS',
            'TTFT_P95_MS',
          ],
          groupBy: ['MODEL', 'SPAN_TYPE'],
          granularity: 'HOUR',
          timezone: 'Europe/Paris',
          filter: { userId: 'user-1' },
          ...RANGE,
        }),
      ),
      1,
    );
  });

  it('SPANS by span type over a range alone: the sealed minute rollup, and span facts for the rest', async () => {
    expectScopedQueries(
      await record(() =>
        repository.metrics({ view: 'SPANS', measures: ['COUNT', 'DURATION_P99_MS'], groupBy: ['SPAN_TYPE'], granularity: 'DAY', ...RANGE }),
      ),
      2,
    );
  });

  it('TRACES daily, one series (no ranking without dimensions)', async () => {
    expectScopedQueries(
      await record(() =>
        repository.metrics({ view: 'TRACES', measures: ['COUNT', 'ERROR_RATE', 'DURATION_P99_MS'], granularity: 'DAY', ...RANGE }),
      ),
      1,
    );
  });

  it('TRACES hourly by root name over a range of part hours: the hour rollup for the whole hours, the traces for the ends', async () => {
    const statements = await record(() =>
      repository.metrics({
        view: 'TRACES',
        measures: ['COUNT', 'DURATION_P95_MS'],
        groupBy: ['ROOT_NAME'],
        granularity: 'HOUR',
        from: '2026-11-01T00:30:00Z',
        to: '2026-11-01T05:15:00Z',
      }),
    );
    expectScopedQueries(statements, 1);
    expect(statements[0]!.sql).toContain('FROM trace_metrics_hour');
    expect(statements[0]!.params).toEqual(expect.arrayContaining(['rollupFromMs', 'rollupToMs', 'tracesFromMs', 'tracesToMs']));
  });

  it.each([
    ['MODEL', 'span_metrics_hour_coarse'],
    ['NAME', 'span_metrics_hour'],
  ] as const)('SPANS hourly by %s: the hour rows from %s', async (dimension, table) => {
    const statements = await record(() =>
      repository.metrics({ view: 'SPANS', measures: ['COUNT'], groupBy: [dimension], granularity: 'HOUR', ...RANGE }),
    );
    expectScopedQueries(statements, 2);
    for (const statement of statements) expect(statement.sql).toMatch(new RegExp(`FROM ${table}\\b(?!_)`));
  });

  it.each([
    ['a trace filter', { filter: { userId: 'user-1' } }],
    ['a dimension the rollup does not keep (USER_ID)', { groupBy: ['USER_ID' as const] }],
    ['a zone offset by a part hour', { timezone: 'Asia/Kolkata' }],
  ])('TRACES with %s: the traces themselves, by minute, range-sized', async (_case, extra) => {
    const statements = await record(() =>
      repository.metrics({ view: 'TRACES', measures: ['COUNT', 'ERROR_COUNT'], granularity: 'DAY', ...RANGE, ...extra }),
    );
    expectScopedQueries(statements, 1);
    expect(statements[0]!.sql).not.toContain('trace_metrics_hour');
    expect(statements[0]!.sql).toContain('FROM trace_minutes FINAL');
  });

  it('FEEDBACK weekly by score name, only scores of matching traces', async () => {
    expectScopedQueries(
      await record(() =>
        repository.metrics({
          view: 'FEEDBACK',
          measures: ['SCORE_AVG', 'COUNT'],
          groupBy: ['SCORE_NAME'],
          granularity: 'WEEK',
          filter: { rootName: 'agent.run' },
          ...RANGE,
        }),
      ),
      1,
    );
  });
});
