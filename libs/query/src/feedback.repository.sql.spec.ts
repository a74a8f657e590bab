import type { ClickHouseClient } from '@spanforge/clickhouse';
import { FeedbackReadRepository } from './feedback.repository';
import { ScopedClickHouse } from './scoped-clickhouse';

/**
 * Every statement FeedbackReadRepository sends, as ClickHouse receives it through
 * ScopedClickHouse, kept in __snapshots__ so a change of SQL shows in review.
 */

describe('FeedbackReadRepository SQL', () => {
  const { db, record } = recordingDb();
  const repository = new FeedbackReadRepository(db);

  it('traceFeedback', async () => {
    expectStatements(await record(() => repository.traceFeedback('0af7651916cd43dd8448eb211c80319c')), 1);
  });
});

// ---- The recording stand-in (the same in every libs/query *.sql.spec.ts) ----------------------

/** One statement as ClickHouse would receive it: whitespace collapsed, the names of its bound parameters (values left out). */
interface Statement {
  queryId: string;
  params: string[];
  sql: string;
}

const SCOPE = ['tenant_id = {tenantId:String}', 'project_id = {projectId:String}'];
const QUERY_ID = /^([\w.]+):[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

/** A real ScopedClickHouse over a fake client that records each statement and answers no rows. */
function recordingDb(): { db: ScopedClickHouse; record: (call: () => Promise<unknown>) => Promise<Statement[]> } {
  let statements: Statement[] = [];
  const client = {
    query: async (params: { query: string; query_params?: Record<string, unknown>; query_id?: string }) => {
      const queryId = QUERY_ID.exec(params.query_id ?? '')?.[1] ?? `(query_id not name:uuid: ${params.query_id})`;
      statements.push({ queryId, params: Object.keys(params.query_params ?? {}).sort(), sql: params.query.replace(/\s+/g, ' ').trim() });
      return { json: async () => [], text: async () => '' };
    },
  } as unknown as ClickHouseClient;
  const db = new ScopedClickHouse(client, { tenantId: 'tenant-1', projectId: 'project-1' });
  return {
    db,
    record: async (call) => {
      statements = [];
      await call();
      return statements;
    },
  };
}

/** The {name:Type} placeholders of a statement, by name. */
function placeholders(sql: string): string[] {
  return [...new Set([...sql.matchAll(/\{(\w+):[^{}]+\}/g)].map((m) => m[1]!))].sort();
}

/**
 * The tables a statement reads (FROM or JOIN a name, not a subquery) without the scope at the
 * read's own level: ScopedClickHouse checks only that the scope appears somewhere in the text.
 */
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

/** Checks each statement's scope and bindings, then snapshots it under its query name. */
function expectStatements(statements: Statement[], count: number): void {
  expect(statements).toHaveLength(count);
  for (const statement of statements) {
    for (const scope of SCOPE) expect(statement.sql).toContain(scope);
    expect(statement.params).toEqual(expect.arrayContaining(['tenantId', 'projectId']));
    expect({ queryId: statement.queryId, unscopedReads: unscopedReads(statement.sql) }).toEqual({ queryId: statement.queryId, unscopedReads: [] });
    expect({ queryId: statement.queryId, unbound: placeholders(statement.sql).filter((p) => !statement.params.includes(p)) }).toEqual({ queryId: statement.queryId, unbound: [] });
    expect(statement.sql).toContain(`log_comment = '${statement.queryId}'`);
    expect(statement).toMatchSnapshot(statement.queryId);
  }
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
