import { PROJECT_TABLES } from '@spanforge/clickhouse';
import { ScopedClickHouse } from '@spanforge/query';
import { startIngestHarness, type IngestHarness } from './ingest-harness';

/**
 * The API's ClickHouse access is scoped by construction: whatever a statement's text says, it
 * reads only its project's rows of every table of project data.
 */
describe('project scope of API statements', () => {
  let h: IngestHarness;
  let a: { tenantId: string; projectId: string };
  let b: { tenantId: string; projectId: string };
  const spansOf = { a: 3, b: 5 };

  beforeAll(async () => {
    h = await startIngestHarness();
    a = await h.newProject('scope-a');
    b = await h.newProject('scope-b');
    const rows = (project: { tenantId: string; projectId: string }, n: number) =>
      Array.from({ length: n }, (_, i) => ({
        tenant_id: project.tenantId,
        project_id: project.projectId,
        trace_id: `${project.projectId.replace(/-/g, '').slice(0, 16)}${String(i).padStart(16, '0')}`,
        span_id: String(i + 1).padStart(16, '0'),
        name: `span-${i}`,
        start_time: '2026-11-30 10:00:00.000000000',
        end_time: '2026-11-30 10:00:01.000000000',
      }));
    await h.services.clickhouse.insert({ table: 'spans', values: [...rows(a, spansOf.a), ...rows(b, spansOf.b)], format: 'JSONEachRow' });
  });
  afterAll(() => h?.stop());

  const count = async (db: ScopedClickHouse, sql: string, params: Record<string, unknown> = {}) =>
    Number((await db.rows<{ n: string | number }>('test.scope', sql, params))[0]!.n);

  it('names every table the migrations made that holds project data', async () => {
    const tables = await h.query<{ table: string }>(
      `SELECT c.table AS table FROM system.columns AS c INNER JOIN system.tables AS t ON t.database = c.database AND t.name = c.table
       WHERE c.database = currentDatabase() AND c.name IN ('tenant_id', 'project_id') AND t.engine NOT IN ('View', 'MaterializedView')
       GROUP BY c.table HAVING count() = 2 ORDER BY c.table`,
    );
    expect(tables.map((t) => t.table)).toEqual([...PROJECT_TABLES].sort());
  });

  it('reads only its project, even from a statement that does not filter or asks for another project', async () => {
    const db = new ScopedClickHouse(h.services.clickhouse, a);
    expect(await count(db, 'SELECT count() AS n FROM spans')).toBe(spansOf.a);
    expect(await count(db, 'SELECT count() AS n FROM spans FINAL WHERE project_id = {other:String}', { other: b.projectId })).toBe(0);
    // A join, a subquery and a CTE over spans are confined the same way.
    expect(await count(db, 'SELECT count() AS n FROM spans AS x INNER JOIN spans AS y ON x.span_id = y.span_id')).toBe(spansOf.a);
    expect(await count(db, 'SELECT count() AS n FROM (SELECT span_id FROM spans WHERE project_id != {projectId:String})')).toBe(0);
    expect(await count(db, 'WITH s AS (SELECT * FROM spans) SELECT count() AS n FROM s')).toBe(spansOf.a);
    // A view over spans (for tools that read ClickHouse directly; the API reads none) is confined or,
    // on engines that cannot apply table filters below a view, refused; never another project's rows.
    const throughView = await count(db, 'SELECT count() AS n FROM otel_traces').catch(() => 'refused');
    expect([spansOf.a, 'refused']).toContain(throughView);
    // The rollups written from the spans (materialized views) are confined too.
    expect(await count(db, 'SELECT count() AS n FROM trace_index')).toBe(spansOf.a);
    expect(await count(new ScopedClickHouse(h.services.clickhouse, b), 'SELECT count() AS n FROM trace_index')).toBe(spansOf.b);
  });

  it('refuses a scope whose ids could not be a tenant or project id', () => {
    expect(() => new ScopedClickHouse(h.services.clickhouse, { tenantId: a.tenantId, projectId: "x' OR 1 = 1 --" })).toThrow(
      /not a tenant or project id/,
    );
  });
});
