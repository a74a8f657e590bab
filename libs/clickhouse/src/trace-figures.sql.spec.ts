import { SCOPE, expectInsertWritesBoundScope, normalisedSql, typedPlaceholders, unscopedReads } from '@spanforge/testing/sql';
import * as figures from './trace-figures.sql';

/**
 * The figure SQL the worker's upkeep, the feedback writer, the trace reads and the bulk loads send
 * (trace-figures.sql.ts), kept in __snapshots__ so a change of SQL shows in review: every exported
 * constant, and traceFiguresSql with the row filters its callers pass. Whitespace is collapsed to
 * one space; the SQL itself runs against real ClickHouse in the integration tests.
 */

/** Every exported SQL constant, by name. */
const constants = Object.entries(figures)
  .filter((entry): entry is [string, string] => typeof entry[1] === 'string')
  .sort(([a], [b]) => a.localeCompare(b));

describe('trace-figures.sql', () => {
  it('exports these SQL constants (a new one gets its snapshot here)', () => {
    expect(constants.map(([name]) => name)).toEqual([
      'FILED_MINUTES_SQL',
      'REFRESH_ALL_SESSION_FIGURES_SQL',
      'REFRESH_COST_DAILY_SQL',
      'REFRESH_COST_MINUTE_SQL',
      'REFRESH_DAY_TRACE_FIGURES_SQL',
      'REFRESH_LOOKED_TRACE_FIGURES_SQL',
      'REFRESH_SESSION_FIGURES_SQL',
      'REFRESH_SESSIONS_FIGURES_SQL',
      'REFRESH_TRACE_FIGURES_SQL',
      'TRACES_DAYS_SQL',
      'TRACES_TIME_SQL',
      'VACATE_TRACE_MINUTES_SQL',
    ]);
  });

  it.each(constants)('%s', (name, sql) => {
    const text = normalisedSql(sql);
    // Every table read is filtered on the scope at its own level; an INSERT … SELECT writes the bound scope.
    expect({ name, unscopedReads: unscopedReads(text) }).toEqual({ name, unscopedReads: [] });
    expectInsertWritesBoundScope(text);
    // VACATE_TRACE_COST_DAYS_SQL reads no table: its rows are the bound scope and trace/day pairs.
    if (name !== 'VACATE_TRACE_COST_DAYS_SQL') for (const scope of SCOPE) expect(text).toContain(scope);
    expect({ placeholders: typedPlaceholders(text), sql: text }).toMatchSnapshot(name);
  });

  it.each([
    ['no row filter', ''],
    [
      'one trace within its days (TraceRepository.figures)',
      ` AND day BETWEEN toDate({from:DateTime64(9, 'UTC')}) AND toDate({to:DateTime64(9, 'UTC')}) AND trace_id = {traceId:String}`,
    ],
  ])('traceFiguresSql: %s', (_case, rowFilter) => {
    const text = normalisedSql(figures.traceFiguresSql(rowFilter));
    expect(unscopedReads(text)).toEqual([]);
    expect({ placeholders: typedPlaceholders(text), sql: text }).toMatchSnapshot('traceFiguresSql');
  });
});
