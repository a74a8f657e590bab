import * as figures from './trace-figures.sql';

/**
 * The figure SQL the worker's upkeep, the feedback writer, the trace reads and the bulk loads send
 * (trace-figures.sql.ts), kept in __snapshots__ so a change of SQL shows in review: every exported
 * constant, and traceFiguresSql with the row filters its callers pass. Whitespace is collapsed to
 * one space; the SQL itself runs against real ClickHouse in the integration tests.
 */

const SCOPE = ['tenant_id = {tenantId:String}', 'project_id = {projectId:String}'];

const normalised = (sql: string) => sql.replace(/\s+/g, ' ').trim();

/** Every exported SQL constant, by name. */
const constants = Object.entries(figures)
  .filter((entry): entry is [string, string] => typeof entry[1] === 'string')
  .sort(([a], [b]) => a.localeCompare(b));

/** The {name:Type} placeholders of a statement, as name:Type. */
function placeholders(sql: string): string[] {
  return [...new Set([...sql.matchAll(/\{(\w+:[^{}]+)\}/g)].map((m) => m[1]!))].sort();
}

/** The tables a statement reads (FROM or JOIN a name, not a subquery) without the scope at the read's own level. */
function unscopedReads(sql: string): string[] {
  const unscoped: string[] = [];
  for (const match of sql.matchAll(/(?<!ARRAY )\b(?:FROM|JOIN) ([A-Za-z_]\w*)\b(?! ?\()/g)) {
    let depth = 0;
    let level = '';
    for (let i = match.index; i < sql.length; i++) {
      const c = sql[i];
      if (c === '(') depth++;
      else if (c === ')' && --depth < 0) break;
      else if (depth === 0) {
        if (sql.startsWith('UNION ALL', i)) break;
        level += c;
      }
    }
    if (!SCOPE.every((s) => level.includes(s))) unscoped.push(match[1]!);
  }
  return unscoped;
}

describe('trace-figures.sql', () => {
  it('exports these SQL constants (a new one gets its snapshot here)', () => {
    expect(constants.map(([name]) => name)).toEqual([
      'REFRESH_ALL_SESSION_FIGURES_SQL',
      'REFRESH_COST_DAILY_SQL',
      'REFRESH_DAY_TRACE_FIGURES_SQL',
      'REFRESH_SESSION_FIGURES_SQL',
      'REFRESH_TRACE_FIGURES_SQL',
      'TRACES_DAYS_SQL',
      'TRACES_START_DAYS_SQL',
      'VACATE_TRACE_COST_DAYS_SQL',
    ]);
  });

  it.each(constants)('%s', (name, sql) => {
    const text = normalised(sql);
    // Every table read is filtered on the scope at its own level; an INSERT … SELECT writes the bound scope.
    expect({ name, unscopedReads: unscopedReads(text) }).toEqual({ name, unscopedReads: [] });
    if (text.startsWith('INSERT INTO')) expect(text).toMatch(/^INSERT INTO \w+ \([^)]*\) SELECT \{tenantId:String\}, \{projectId:String\}, /);
    // VACATE_TRACE_COST_DAYS_SQL reads no table: its rows are the bound scope and trace/day pairs.
    if (name !== 'VACATE_TRACE_COST_DAYS_SQL') for (const scope of SCOPE) expect(text).toContain(scope);
    expect({ placeholders: placeholders(text), sql: text }).toMatchSnapshot(name);
  });

  it.each([
    ['no row filter', ''],
    ['one trace within its days (TraceRepository.figures)', ' AND day BETWEEN toDate({from:DateTime64(9)}) AND toDate({to:DateTime64(9)}) AND trace_id = {traceId:String}'],
  ])('traceFiguresSql: %s', (_case, rowFilter) => {
    const text = normalised(figures.traceFiguresSql(rowFilter));
    expect(unscopedReads(text)).toEqual([]);
    expect({ placeholders: placeholders(text), sql: text }).toMatchSnapshot('traceFiguresSql');
  });
});
