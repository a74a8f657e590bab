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

/** Every table read is filtered on the scope at its own level; an INSERT … SELECT writes the bound scope. */
function expectScoped(name: string, text: string): void {
  expect({ name, unscopedReads: unscopedReads(text) }).toEqual({ name, unscopedReads: [] });
  expectInsertWritesBoundScope(text);
  for (const scope of SCOPE) expect(text).toContain(scope);
}

describe('trace-figures.sql', () => {
  it('exports these SQL constants (a new one gets its snapshot here)', () => {
    expect(constants.map(([name]) => name)).toEqual([
      'REFRESH_ALL_SESSION_FIGURES_SQL',
      'REFRESH_COST_DAILY_SQL',
      'REFRESH_COST_MINUTE_SQL',
      'REFRESH_DAY_TRACE_FIGURES_SQL',
      'REFRESH_SESSION_FIGURES_SQL',
      'REFRESH_SESSIONS_FIGURES_SQL',
      'STORED_TIMES_WITH_SQL',
      'VACATE_TRACE_MINUTES_SQL',
    ]);
  });

  // The statements over a round's traces in groups of like time: one branch per group.
  it.each([
    ['filedMinutesSql', figures.filedMinutesSql],
    ['refreshLookedTraceFiguresSql', figures.refreshLookedTraceFiguresSql],
    ['refreshStoredTraceFiguresSql', figures.refreshStoredTraceFiguresSql],
  ] as const)('%s, one group and two', (name, statement) => {
    for (const groups of [1, 2]) {
      const text = normalisedSql(statement(groups));
      expectScoped(name, text);
      const ids = typedPlaceholders(text).filter((placeholder) => /^traceIds\d/.test(placeholder));
      expect(ids).toEqual(Array.from({ length: groups }, (_, i) => `traceIds${i}:Array(String)`));
      expect({ placeholders: typedPlaceholders(text), sql: text }).toMatchSnapshot(`${name}(${groups})`);
    }
    expect(() => statement(0)).toThrow('at least one group');
  });

  it.each(constants)('%s', (name, sql) => {
    const text = normalisedSql(sql);
    expectScoped(name, text);
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
