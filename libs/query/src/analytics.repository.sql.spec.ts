import type { ClickHouseClient } from '@spanforge/clickhouse';
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
  const { db, record } = recordingDb();
  const repository = new AnalyticsRepository(db);

  it('latencyByIterations: no filter', async () => {
    expectStatements(await record(() => repository.latencyByIterations(undefined)), 1);
  });

  it('latencyByIterations: every trace filter', async () => {
    expectStatements(await record(() => repository.latencyByIterations(EVERY_FILTER)), 1);
  });

  it('latencyByIterations: no error, attributes without a range, feedback without bounds', async () => {
    expectStatements(await record(() => repository.latencyByIterations(OTHER_BRANCHES)), 1);
  });

  it('costBreakdown daily: all time, from cost_daily', async () => {
    expectStatements(await record(() => repository.costBreakdown(['MODEL', 'DAY'], undefined)), 1);
  });

  it('costBreakdown daily: whole days only, every daily dimension', async () => {
    const filter = { from: iso(midnight), to: iso(midnight + 3 * DAY) };
    expectStatements(await record(() => repository.costBreakdown(['MODEL', 'PROVIDER', 'SPAN_TYPE', 'SERVICE', 'DAY'], filter)), 1);
  });

  it('costBreakdown daily and part days: a part day at both ends', async () => {
    const filter = { from: iso(midnight + 5.5 * HOUR), to: iso(midnight + 3 * DAY + HOUR) };
    expectStatements(await record(() => repository.costBreakdown(['MODEL', 'DAY'], filter)), 1);
  });

  it('costBreakdown daily and part days: from only (part day at the start)', async () => {
    expectStatements(await record(() => repository.costBreakdown(['PROVIDER'], { from: iso(midnight + 5.5 * HOUR) })), 1);
  });

  it('costBreakdown daily and part days: to only (part day at the end)', async () => {
    expectStatements(await record(() => repository.costBreakdown(['SPAN_TYPE'], { to: iso(midnight + 3 * DAY + HOUR) })), 1);
  });

  it('costBreakdown part days: within one day', async () => {
    const filter = { from: iso(midnight + HOUR), to: iso(midnight + 2 * HOUR) };
    expectStatements(await record(() => repository.costBreakdown(['MODEL'], filter)), 1);
  });

  it('costBreakdown part days: two part days across midnight', async () => {
    const filter = { from: iso(midnight + 3 * HOUR), to: iso(midnight + DAY + 5 * HOUR) };
    expectStatements(await record(() => repository.costBreakdown(['SERVICE', 'DAY'], filter)), 1);
  });

  it('costBreakdown general: a filter beyond the time range', async () => {
    const filter = { from: iso(midnight), to: iso(midnight + DAY), minIterations: 0 };
    expectStatements(await record(() => repository.costBreakdown(['MODEL', 'DAY'], filter)), 1);
  });

  it('costBreakdown general: the SESSION dimension, every dimension, no filter', async () => {
    expectStatements(await record(() => repository.costBreakdown(['SESSION', 'MODEL', 'PROVIDER', 'SPAN_TYPE', 'SERVICE', 'DAY'], undefined)), 1);
  });

  it('costBreakdown general: every trace filter', async () => {
    expectStatements(await record(() => repository.costBreakdown(['MODEL'], EVERY_FILTER)), 1);
  });

  it('sessions: no filter, first page', async () => {
    expectStatements(await record(() => repository.sessions(undefined, 20, undefined)), 2);
  });

  it('sessions: every filter, feedback with both bounds, after a cursor', async () => {
    const filter = { from: iso(midnight), to: iso(midnight + DAY), userId: 'user-1', feedback: { name: 'helpful', min: 1, max: 4 } };
    expectStatements(await record(() => repository.sessions(filter, 20, [0.25, 'session-9'])), 2);
  });

  it('sessions: feedback without bounds', async () => {
    expectStatements(await record(() => repository.sessions({ feedback: { name: 'helpful' } }, 20, undefined)), 2);
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
