import { SCOPE, expectInsertWritesBoundScope, normalisedSql, typedPlaceholders, unscopedReads } from '@spanforge/testing/sql';
import * as metrics from './trace-metrics.sql';

/**
 * The trace-metrics SQL the worker's upkeep, the erasure job and the metrics query send
 * (trace-metrics.sql.ts), kept in __snapshots__ so a change of SQL shows in review. Whitespace is
 * collapsed to one space; the SQL itself runs against real ClickHouse in the integration tests.
 */

const statements = Object.entries(metrics)
  .filter((entry): entry is [string, string] => typeof entry[1] === 'string' && /\b(SELECT|INSERT)\b/.test(entry[1]))
  .sort(([a], [b]) => a.localeCompare(b));

describe('trace-metrics.sql', () => {
  it('exports these statements (a new one gets its snapshot here)', () => {
    expect(statements.map(([name]) => name)).toEqual([
      'REFRESH_TRACE_METRICS_HOUR_SQL',
      'REFRESH_TRACE_METRICS_MINUTE_SQL',
      'TRACE_METRIC_HOUR_ROWS_SQL',
    ]);
  });

  it.each(statements)('%s', (name, sql) => {
    const text = normalisedSql(sql);
    // Every table read is filtered on the scope at its own level; an INSERT … SELECT writes the bound scope.
    expect({ name, unscopedReads: unscopedReads(text) }).toEqual({ name, unscopedReads: [] });
    expectInsertWritesBoundScope(text);
    for (const scope of SCOPE) expect(text).toContain(scope);
    expect({ placeholders: typedPlaceholders(text), sql: text }).toMatchSnapshot(name);
  });

  it('aggregates every figure column of trace_metrics_hour after its dimensions', () => {
    for (const column of metrics.TRACE_METRIC_FIGURES) expect(metrics.TRACE_HOUR_AGGREGATES).toContain(` AS ${column}`);
  });
});
