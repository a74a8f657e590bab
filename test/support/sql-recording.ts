import { Readable } from 'node:stream';
import { PLACEHOLDER_PATTERN, type ClickHouseClient } from '@spanforge/clickhouse';

/**
 * The recording stand-in of the *.sql.spec.ts snapshot specs: a fake ClickHouseClient that records
 * every statement as ClickHouse would receive it, and the checks each recorded statement must pass
 * (scoped to the tenant and project at every table read, every placeholder bound, named by its
 * query id). Imported as `@spanforge/testing/sql`, apart from `@spanforge/testing`, whose index
 * starts real services.
 */

/** The scope every project statement carries, as ScopedClickHouse and the repositories write it. */
export const SCOPE = ['tenant_id = {tenantId:String}', 'project_id = {projectId:String}'];

/** The scope a recording ScopedClickHouse is made with. */
export const RECORDING_SCOPE = { tenantId: 'tenant-1', projectId: 'project-1' };

/** An INSERT … SELECT (after a WITH, if any) that writes the bound scope as its rows' tenant and project. */
export const BOUND_SCOPE_INSERT =
  /^INSERT INTO \w+ \([^)]*\) (WITH \(SELECT .*\) AS \w+ )?SELECT \{tenantId:String\}, \{projectId:String\}, /;

const QUERY_ID = /^([\w.]+):[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
const PLACEHOLDER = new RegExp(PLACEHOLDER_PATTERN, 'g');

/** How a statement's project table filters (the same for every statement of a scope) read in snapshots. */
export const TABLE_FILTERS_SHOWN = 'additional_table_filters = {<every project table>: <the scope>}';

/** The engine-side project filters (projectTableFilters) of a statement, shortened for its snapshot; checked apart. */
function shortenedTableFilters(sql: string): string {
  return sql.replace(/additional_table_filters = \{[^{}]*\}/, TABLE_FILTERS_SHOWN);
}

/** A statement as it is snapshotted: whitespace collapsed to one space. */
export const normalisedSql = (sql: string): string => sql.replace(/\s+/g, ' ').trim();

/**
 * One call on the client as ClickHouse would receive it: the statement with whitespace collapsed,
 * the names of its bound parameters (values left out), or for an insert its table and the columns
 * of its rows.
 */
export interface RecordedStatement {
  call: 'query' | 'command' | 'insert' | 'exec';
  queryId: string;
  logComment: string | undefined;
  sql?: string;
  params?: string[];
  format?: string;
  table?: string;
  columns?: string[];
}

/** A statement read through ScopedClickHouse, as it is snapshotted: its name, the names of its bound parameters, its SQL. */
export interface ScopedQuery {
  queryId: string;
  params: string[];
  sql: string;
}

interface CallParams {
  query?: string;
  query_params?: Record<string, unknown>;
  query_id?: string;
  clickhouse_settings?: { log_comment?: string };
  format?: string;
  table?: string;
  values?: unknown;
}

/**
 * A fake ClickHouseClient that records every call. A query answers the rows `answers` gives for
 * its name (none by default); exec answers an empty stream. Wrap `client` in a ScopedClickHouse
 * (with RECORDING_SCOPE) to record a repository that reads through it.
 */
export function recordingClient(answers: (queryId: string) => unknown[] = () => []) {
  let statements: RecordedStatement[] = [];
  /** The rows each insert was given, in call order. */
  let insertedRows: Array<Array<Record<string, unknown>>> = [];
  const recordCall = (call: RecordedStatement['call'], params: CallParams): string => {
    const queryId =
      params.query_id === undefined
        ? '(no query_id)'
        : (QUERY_ID.exec(params.query_id)?.[1] ?? `(query_id not name:uuid: ${params.query_id})`);
    const statement: RecordedStatement = { call, queryId, logComment: params.clickhouse_settings?.log_comment };
    if (params.query !== undefined) statement.sql = shortenedTableFilters(normalisedSql(params.query));
    if (params.query_params !== undefined) statement.params = Object.keys(params.query_params).sort();
    if (params.format !== undefined) statement.format = params.format;
    if (params.table !== undefined) statement.table = params.table;
    if (Array.isArray(params.values)) {
      const rows = params.values as Array<Record<string, unknown>>;
      insertedRows.push(rows);
      statement.columns = [...new Set(rows.flatMap((row) => Object.keys(row)))].sort();
    }
    statements.push(statement);
    return queryId;
  };
  const client = {
    query: async (params: CallParams) => {
      const rows = answers(recordCall('query', params));
      return { json: async () => rows, text: async () => rows.map((row) => `${JSON.stringify(row)}\n`).join('') };
    },
    command: async (params: CallParams) => {
      recordCall('command', params);
      return { query_id: params.query_id ?? '' };
    },
    insert: async (params: CallParams) => {
      recordCall('insert', params);
      return { executed: true, query_id: params.query_id ?? '' };
    },
    exec: async (params: CallParams) => {
      recordCall('exec', params);
      return { stream: Readable.from([]), query_id: params.query_id ?? '' };
    },
  } as unknown as ClickHouseClient;
  return {
    client,
    insertedRows: () => insertedRows,
    record: async (call: () => Promise<unknown>): Promise<RecordedStatement[]> => {
      statements = [];
      insertedRows = [];
      await call();
      return statements;
    },
  };
}

/** The {name:Type} placeholders of a statement, by name. */
export function placeholders(sql: string): string[] {
  return [...new Set([...sql.matchAll(PLACEHOLDER)].map((m) => m[1]!))].sort();
}

/** The {name:Type} placeholders of a statement, as name:Type. */
export function typedPlaceholders(sql: string): string[] {
  return [...new Set([...sql.matchAll(PLACEHOLDER)].map((m) => `${m[1]!}:${m[2]!}`))].sort();
}

/**
 * The tables a statement reads (FROM or JOIN a name, not a subquery) without the scope at the
 * read's own level. The engine confines every read of a project table anyway (ScopedClickHouse's
 * table filters); a statement's own scope at each level is what picks the primary key range.
 */
export function unscopedReads(sql: string): string[] {
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

/** Checks that a statement is scoped, every table read scoped at its level, every placeholder bound. */
function expectScopedAndBound(queryId: string, sql: string, params: string[] | undefined): void {
  for (const scope of SCOPE) expect(sql).toContain(scope);
  expect(params).toEqual(expect.arrayContaining(['tenantId', 'projectId']));
  expect({ queryId, unscopedReads: unscopedReads(sql) }).toEqual({ queryId, unscopedReads: [] });
  expect({ queryId, unbound: placeholders(sql).filter((p) => !params!.includes(p)) }).toEqual({ queryId, unbound: [] });
}

/** An INSERT … SELECT writes the bound scope as the rows' tenant and project. */
export function expectInsertWritesBoundScope(sql: string): void {
  if (sql.startsWith('INSERT INTO')) expect(sql).toMatch(BOUND_SCOPE_INSERT);
}

/** Checks a statement with SQL text: scoped, every table read scoped at its level, every placeholder bound. */
export function expectScopedSql(statement: RecordedStatement): void {
  const sql = statement.sql ?? '';
  expectScopedAndBound(statement.queryId, sql, statement.params);
  expect({ queryId: statement.queryId, confinedByTheEngine: sql.includes(TABLE_FILTERS_SHOWN) }).toEqual({
    queryId: statement.queryId,
    confinedByTheEngine: true,
  });
  expectInsertWritesBoundScope(sql);
}

/**
 * Checks each statement read through ScopedClickHouse (scope, bindings, its name in log_comment),
 * then snapshots its name, parameter names and SQL under its query name.
 */
export function expectScopedQueries(statements: RecordedStatement[], count: number): void {
  expect(statements).toHaveLength(count);
  for (const { queryId, params = [], sql = '' } of statements) {
    // The recorder shortened the engine-side filter of every project table; that it was there is checked here.
    expect({ queryId, confinedByTheEngine: sql.includes(TABLE_FILTERS_SHOWN) }).toEqual({ queryId, confinedByTheEngine: true });
    const statement: ScopedQuery = { queryId, params, sql };
    expectScopedAndBound(queryId, sql, params);
    expect(sql).toContain(`log_comment = '${queryId}'`);
    expect(statement).toMatchSnapshot(queryId);
  }
}

/** Registers the tests of the checks themselves, in the spec that calls it. */
export function describeStatementChecks(): void {
  describe('the statement checks themselves', () => {
    it('find a read whose own level lacks the scope, even when the statement has it elsewhere', () => {
      const scoped = 'SELECT * FROM t WHERE tenant_id = {tenantId:String} AND project_id = {projectId:String}';
      expect(unscopedReads(scoped)).toEqual([]);
      expect(unscopedReads(`${scoped} AND x IN (SELECT x FROM u WHERE y = 1)`)).toEqual(['u']);
      expect(unscopedReads(`SELECT * FROM (${scoped}) AS a LEFT JOIN other AS b ON a.x = b.x`)).toEqual(['other']);
      expect(
        unscopedReads(
          `SELECT * FROM a FINAL ARRAY JOIN r WHERE tenant_id = {tenantId:String} AND project_id = {projectId:String} UNION ALL SELECT * FROM b`,
        ),
      ).toEqual(['b']);
      expect(placeholders('a = {x:String} AND b IN {y:Array(String)} AND c = {x:String}')).toEqual(['x', 'y']);
    });
  });
}
