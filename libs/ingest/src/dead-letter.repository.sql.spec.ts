import { Readable } from 'node:stream';
import type { ClickHouseClient } from '@spanforge/clickhouse';
import { DeadLetterRepository, type DeadLetter } from './dead-letter.repository';

/**
 * Every statement DeadLetterRepository sends, as ClickHouse receives it, kept in __snapshots__ so
 * a change of SQL shows in review; the SQL itself runs against real ClickHouse in the ingest
 * integration tests.
 */

const PROJECT = { tenantId: 'tenant-1', projectId: 'project-1' };

/** Writes whose rows say whose they are (tenant_id and project_id columns) instead of a scope in their SQL. */
const ROW_SCOPED_WRITES = new Set(['ingest.insert_dead_letters']);

const LETTER: DeadLetter = {
  tenantId: 'tenant-1',
  projectId: 'project-1',
  id: 'job:42',
  kind: 'export_job',
  reason: 'retries_exhausted',
  error: 'connect ECONNREFUSED',
  exportId: 'export-1',
  spans: 12,
  payload: '{"name":"otlp-export","data":{}}',
  deadLetteredAt: Date.UTC(2026, 10, 20, 9),
  replayedAt: null,
};

describe('DeadLetterRepository SQL', () => {
  const { client, record, insertedRows } = recordingClient();
  const repository = new DeadLetterRepository(client);

  /** Checks each statement's scope (or, for a row-scoped write, its rows'), then snapshots it under its query name. */
  function expectStatements(statements: Statement[], count: number): void {
    expect(statements).toHaveLength(count);
    for (const statement of statements) {
      expect(statement.logComment).toBe(statement.queryId);
      if (ROW_SCOPED_WRITES.has(statement.queryId)) {
        for (const row of insertedRows().flat()) expect(row).toEqual(expect.objectContaining({ tenant_id: 'tenant-1', project_id: 'project-1' }));
      } else {
        expectScopedSql(statement);
      }
      expect(statement).toMatchSnapshot(statement.queryId);
    }
  }

  it('add', async () => {
    expectStatements(await record(() => repository.add([LETTER])), 1);
  });

  it('add: nothing to add sends nothing', async () => {
    expect(await record(() => repository.add([]))).toEqual([]);
  });

  it('list (with or without replayed letters: the same statement)', async () => {
    const [withReplayed] = await record(() => repository.list(PROJECT, { first: 50, includeReplayed: true }));
    const [pendingOnly] = await record(() => repository.list(PROJECT, { first: 50, includeReplayed: false }));
    expect(pendingOnly).toEqual(withReplayed);
    expectStatements([withReplayed!], 1);
  });

  it('pending (some ids or all of them: the same statement)', async () => {
    const [some] = await record(() => repository.pending(PROJECT, ['job:42'], 200));
    const [all] = await record(() => repository.pending(PROJECT, undefined, 200));
    expect(all).toEqual(some);
    expectStatements([some!], 1);
  });

  it('markReplayed', async () => {
    expectStatements(await record(() => repository.markReplayed([LETTER], Date.UTC(2026, 10, 21))), 1);
    expect(insertedRows()[0]![0]).toEqual(expect.objectContaining({ replayed_at: '2026-11-21 00:00:00.000' }));
  });
});

// ---- The recording stand-in (the same in every non-ScopedClickHouse *.sql.spec.ts) --------------

/**
 * One call on the client as ClickHouse would receive it: the statement with whitespace collapsed,
 * the names of its bound parameters (values left out), or for an insert its table and the columns
 * of its rows.
 */
interface Statement {
  call: 'query' | 'command' | 'insert' | 'exec';
  queryId: string;
  logComment: string | undefined;
  sql?: string;
  params?: string[];
  format?: string;
  table?: string;
  columns?: string[];
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

const SCOPE = ['tenant_id = {tenantId:String}', 'project_id = {projectId:String}'];
const QUERY_ID = /^([\w.]+):[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

/**
 * A fake ClickHouseClient that records every call. A query answers the rows `answers` gives for
 * its name (none by default); exec answers an empty stream.
 */
function recordingClient(answers: (queryId: string) => unknown[] = () => []) {
  let statements: Statement[] = [];
  /** The rows each insert was given, in call order. */
  let insertedRows: Array<Array<Record<string, unknown>>> = [];
  const recordCall = (call: Statement['call'], params: CallParams): string => {
    const queryId = params.query_id === undefined ? '(no query_id)' : (QUERY_ID.exec(params.query_id)?.[1] ?? `(query_id not name:uuid: ${params.query_id})`);
    const statement: Statement = { call, queryId, logComment: params.clickhouse_settings?.log_comment };
    if (params.query !== undefined) statement.sql = params.query.replace(/\s+/g, ' ').trim();
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
    record: async (call: () => Promise<unknown>): Promise<Statement[]> => {
      statements = [];
      insertedRows = [];
      await call();
      return statements;
    },
  };
}

/** The {name:Type} placeholders of a statement, by name. */
function placeholders(sql: string): string[] {
  return [...new Set([...sql.matchAll(/\{(\w+):[^{}]+\}/g)].map((m) => m[1]!))].sort();
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

/** Checks a statement with SQL text: scoped, every table read scoped at its level, every placeholder bound. */
function expectScopedSql(statement: Statement): void {
  const sql = statement.sql ?? '';
  for (const scope of SCOPE) expect(sql).toContain(scope);
  expect(statement.params).toEqual(expect.arrayContaining(['tenantId', 'projectId']));
  expect({ queryId: statement.queryId, unscopedReads: unscopedReads(sql) }).toEqual({ queryId: statement.queryId, unscopedReads: [] });
  expect({ queryId: statement.queryId, unbound: placeholders(sql).filter((p) => !statement.params!.includes(p)) }).toEqual({ queryId: statement.queryId, unbound: [] });
  // An INSERT … SELECT writes the bound scope as the rows' tenant and project.
  if (sql.startsWith('INSERT INTO')) expect(sql).toMatch(/^INSERT INTO \w+ \([^)]*\) SELECT \{tenantId:String\}, \{projectId:String\}, /);
}

describe('the statement checks themselves', () => {
  it('find a read whose own level lacks the scope, even when the statement has it elsewhere', () => {
    const scoped = 'SELECT * FROM t WHERE tenant_id = {tenantId:String} AND project_id = {projectId:String}';
    expect(unscopedReads(scoped)).toEqual([]);
    expect(unscopedReads(`${scoped} AND x IN (SELECT x FROM u WHERE y = 1)`)).toEqual(['u']);
    expect(unscopedReads(`SELECT * FROM (${scoped}) AS a LEFT JOIN other AS b ON a.x = b.x`)).toEqual(['other']);
    expect(unscopedReads(`SELECT * FROM a FINAL ARRAY JOIN r WHERE tenant_id = {tenantId:String} AND project_id = {projectId:String} UNION ALL SELECT * FROM b`)).toEqual(['b']);
    expect(placeholders('a = {x:String} AND b IN {y:Array(String)} AND c = {x:String}')).toEqual(['x', 'y']);
  });
});
