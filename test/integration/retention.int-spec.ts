import { PROJECT_TABLES, RETAINED_SINCE } from '@spanforge/clickhouse';
import { RetentionRepository, spanPartition } from '@spanforge/ingest';
import { ScopedClickHouse } from '@spanforge/query';
import { SpanRecorder, exportSpans, exportSucceeded, graphql, otlpExporter } from '../support';
import { expectedTrace, recordAgentTrace, sendAgentTrace } from './agent-trace';
import { startIngestHarness, type IngestHarness } from './ingest-harness';

/*
 * A project's retention (docs/data-policy.md, "Retention"): data older than `retentionDays` by its
 * start time leaves every answer at once, and spans that arrive older are rejected as `expired`.
 * Time is not moved: a trace is sent that the retention keeps for a few seconds more, and the test
 * waits for it to expire.
 */

const DAY_MS = 86_400_000;
const RETENTION_DAYS = 30;
const CALL = { model: 'gpt-4o-mini', provider: 'openai', input: 900, cacheRead: 0, output: 80 };
/** How long the expiring trace is kept after it is sent: time to store it and compute its figures. */
const MARGIN_MS = 12_000;

const SET_RETENTION = `mutation($input: SetDataPolicyInput!) { setDataPolicy(input: $input) { retentionDays } }`;
const ANSWERS = `query($from: DateTime!, $to: DateTime!) {
  traces(filter: { from: $from, to: $to }, first: 10) { totalCount nodes { traceId costUsd } }
  sessions(filter: { from: $from, to: $to }, first: 10) { totalCount nodes { sessionId costUsd } }
  costBreakdown(groupBy: [MODEL], filter: { from: $from, to: $to }) { keys costUsd spanCount }
}`;

interface Answers {
  traces: { totalCount: number; nodes: Array<{ traceId: string; costUsd: number }> };
  sessions: { totalCount: number; nodes: Array<{ sessionId: string; costUsd: number }> };
  costBreakdown: Array<{ keys: string[]; costUsd: number; spanCount: number }>;
}

const sortedBreakdown = (rows: Answers['costBreakdown']) => [...rows].sort((a, b) => a.keys.join().localeCompare(b.keys.join()));
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe('retention', () => {
  let h: IngestHarness;

  beforeAll(async () => {
    h = await startIngestHarness();
  });
  afterAll(() => h?.stop());

  it('answers nothing older than the project keeps, and rejects spans that arrive older as expired', async () => {
    const project = await h.newProject('retention');
    const set = await graphql<{ setDataPolicy: { retentionDays: number } }>(
      h.api,
      SET_RETENTION,
      { input: { projectId: project.projectId, retentionDays: RETENTION_DAYS } },
      project.apiKey,
    );
    expect(set.errors).toBeUndefined();
    expect(set.data!.setDataPolicy.retentionDays).toBe(RETENTION_DAYS);

    // One trace kept for MARGIN_MS more when it is sent, one recent, one already past the retention.
    const sentAt = Date.now();
    const expiringStart = sentAt - RETENTION_DAYS * DAY_MS + MARGIN_MS;
    const expiring = await sendAgentTrace(h, project, { session: 'expiring', calls: [CALL, CALL], start: expiringStart }, 0);
    const recorder = new SpanRecorder();
    recordAgentTrace(recorder, { session: 'recent', calls: [CALL], start: sentAt - 60_000 });
    const recentSpans = recorder.finished();
    const recent = expectedTrace(recentSpans);
    const tooOld = new SpanRecorder();
    recordAgentTrace(tooOld, { session: 'too-old', calls: [CALL], start: sentAt - (RETENTION_DAYS + 1) * DAY_MS });
    const exporter = () => otlpExporter('http/protobuf', { http: h.http, grpc: h.grpc }, project.apiKey);
    expect(exportSucceeded(await exportSpans(exporter(), recentSpans))).toBe(true);
    expect(exportSucceeded(await exportSpans(exporter(), tooOld.finished()))).toBe(true);
    await h.waitForSpans(project.projectId, 2 * recentSpans.length + 3);

    const range = { from: new Date(sentAt - (RETENTION_DAYS + 2) * DAY_MS).toISOString(), to: new Date(sentAt + DAY_MS).toISOString() };
    const answers = async () => {
      const answer = await graphql<Answers>(h.api, ANSWERS, range, project.apiKey);
      expect(answer.errors).toBeUndefined();
      return answer.data!;
    };
    // Both kept traces are answered, figures included, while the first is still kept.
    let before = await answers();
    // The daily costs come last in the worker's upkeep, after the trace and session figures.
    const spansCounted = (answer: Answers) => answer.costBreakdown.reduce((n, row) => n + row.spanCount, 0);
    const keptSpans = 1 + 2 * 2 + (1 + 2 * 1) + 3;
    for (
      let i = 0;
      i < 50 && (before.traces.nodes.length < 2 || before.sessions.nodes.length < 2 || spansCounted(before) < keptSpans);
      i++
    ) {
      await sleep(100);
      before = await answers();
    }
    expect(Date.now()).toBeLessThan(expiringStart + RETENTION_DAYS * DAY_MS);
    expect(before.traces.nodes.map((t) => t.traceId).sort()).toEqual([expiring, recent.traceId].sort());
    expect(before.sessions.nodes.map((s) => s.sessionId).sort()).toEqual(['expiring', 'recent']);
    // Spans without a model are the '' row: each trace's root, and an agent and a tool span per call.
    expect(sortedBreakdown(before.costBreakdown)).toEqual([
      { keys: [''], costUsd: 0, spanCount: 1 + 2 * 2 + (1 + 2 * 1) },
      { keys: [CALL.model], costUsd: expect.closeTo(3 * recent.costUsd, 9), spanCount: 3 },
    ]);

    // The span that arrived past the retention was not stored; it is accounted as rejected, expired.
    const tooOldSpans = tooOld.finished().length;
    let expired: Array<{ spans: string }> = [];
    for (let i = 0; i < 100 && Number(expired[0]?.spans ?? 0) < tooOldSpans; i++) {
      expired = await h.query<{ spans: string }>(
        "SELECT sum(spans) AS spans FROM ingest_accounting FINAL WHERE project_id = {p:String} AND outcome = 'rejected' AND reason = 'expired'",
        { p: project.projectId },
      );
      if (Number(expired[0]?.spans ?? 0) < tooOldSpans) await sleep(100);
    }
    expect(Number(expired[0]!.spans)).toBe(tooOldSpans);
    const stored = await h.query<{ traces: string }>('SELECT uniqExact(trace_id) AS traces FROM spans WHERE project_id = {p:String}', {
      p: project.projectId,
    });
    expect(Number(stored[0]!.traces)).toBe(2);

    // Once the first trace is past the retention, no answer has it.
    await sleep(expiringStart + RETENTION_DAYS * DAY_MS - Date.now() + 1_500);
    const after = await answers();
    expect(after.traces).toEqual({ totalCount: 1, nodes: [{ traceId: recent.traceId, costUsd: expect.closeTo(recent.costUsd, 9) }] });
    expect(after.sessions).toEqual({ totalCount: 1, nodes: [{ sessionId: 'recent', costUsd: expect.closeTo(recent.costUsd, 9) }] });
    expect(sortedBreakdown(after.costBreakdown)).toEqual([
      { keys: [''], costUsd: 0, spanCount: 1 + 2 * 1 },
      { keys: [CALL.model], costUsd: expect.closeTo(recent.costUsd, 9), spanCount: 1 },
    ]);
    const trace = await graphql<{ trace: unknown }>(
      h.api,
      'query($id: String!) { trace(traceId: $id) { traceId } }',
      { id: expiring },
      project.apiKey,
    );
    expect(trace.data!.trace).toBeNull();

    // Every table of rows with their own start: a read under the project's scope sees none of the
    // expired trace's rows, which are still stored until their parts expire.
    const keptSince = Date.now() - RETENTION_DAYS * DAY_MS;
    const scope = { tenantId: project.tenantId, projectId: project.projectId };
    const scoped = new ScopedClickHouse(h.services.clickhouse, scope, undefined, undefined, () => keptSince);
    const withTraceIds = new Set(
      (await h.query<{ table: string }>("SELECT table FROM system.columns WHERE database = currentDatabase() AND name = 'trace_id'")).map(
        (row) => row.table,
      ),
    );
    for (const table of PROJECT_TABLES) {
      const retained = RETAINED_SINCE[table];
      // Rows of a day, hour or minute (cost_daily: the costs of a day) leave when the whole
      // period has; the answers above take such a part day from the traces' starts.
      if (retained === null || !retained.includes('{since}') || !withTraceIds.has(table)) continue;
      const count = async (db: ScopedClickHouse) =>
        Number(
          (
            await db.rows<{ n: string }>('retention.count', `SELECT count() AS n FROM ${table} WHERE trace_id = {t:String}`, {
              t: expiring,
            })
          )[0]!.n,
        );
      expect({ table, answered: await count(scoped) }).toEqual({ table, answered: 0 });
    }

    // Storage drops the expired trace's rows by whole parts (its spans expire in a week of their
    // own): the tables whose rows are kept by their own start hold none of them once the engine's
    // TTL has run. Rows of a day, hour or minute follow when their period has expired.
    const storedOf = async (table: string, column: string) =>
      Number(
        (
          await h.query<{ n: string }>(`SELECT count() AS n FROM ${table} WHERE project_id = {p:String} AND ${column} = {v:String}`, {
            p: project.projectId,
            v: column === 'trace_id' ? expiring : 'expiring',
          })
        )[0]!.n,
      );
    const dropped = [
      ['spans', 'trace_id'],
      ['trace_index', 'trace_id'],
      ['trace_figures', 'trace_id'],
      ['sessions', 'session_id'],
      ['session_figures', 'session_id'],
      ['session_minutes', 'session_id'],
    ];
    let left: Array<{ table: string; rows: number }> = [];
    for (let i = 0; i < 450; i++) {
      left = (await Promise.all(dropped.map(async ([table, column]) => ({ table: table!, rows: await storedOf(table!, column!) })))).filter(
        (t) => t.rows > 0,
      );
      if (left.length === 0) break;
      await sleep(100);
    }
    expect(left).toEqual([]);
    // The recent trace, in a partition that expires a month later, is all there.
    const kept = await h.query<{ n: string }>('SELECT count() AS n FROM spans FINAL WHERE project_id = {p:String}', {
      p: project.projectId,
    });
    expect(Number(kept[0]!.n)).toBe(recentSpans.length);
  }, 90_000);

  it('deletes what was stored before a retention was set, once it is older than the retention', async () => {
    const project = await h.newProject('retention-set-later');
    const now = Date.now();
    // Sent while the project keeps everything: stored under no retention (its partitions never expire).
    const old = await sendAgentTrace(h, project, { session: 'old', calls: [CALL], start: now - 10 * DAY_MS }, 0);
    const recent = await sendAgentTrace(h, project, { session: 'recent', calls: [CALL], start: now - 60_000 }, 1);
    const tablesWithTraceIds = (
      await h.query<{ table: string }>(
        "SELECT table FROM system.columns WHERE database = currentDatabase() AND name = 'trace_id' AND table IN {tables:Array(String)}",
        { tables: PROJECT_TABLES.filter((t) => RETAINED_SINCE[t] !== null) },
      )
    ).map((row) => row.table);
    const stored = async (traceId: string) => {
      const counts: Record<string, number> = {};
      for (const table of tablesWithTraceIds) {
        const [row] = await h.query<{ n: string }>(
          `SELECT count() AS n FROM ${table} WHERE project_id = {p:String} AND trace_id = {t:String}`,
          {
            p: project.projectId,
            t: traceId,
          },
        );
        counts[table] = Number(row!.n);
      }
      return counts;
    };
    // The worker's sealer computes the old trace's minutes and hour at its next pass (they are long
    // past its delay): wait for it, so that the sweep below races no rollup being computed.
    for (const deadline = Date.now() + 60_000; Date.now() < deadline; await sleep(250)) {
      const [sealed] = await h.query<{ n: string }>(
        'SELECT count() AS n FROM span_metrics_hour WHERE project_id = {p:String} AND hour < now() - INTERVAL 1 DAY',
        { p: project.projectId },
      );
      if (Number(sealed!.n) > 0) break;
    }
    const recentBefore = await stored(recent);
    expect((await stored(old))['spans']).toBeGreaterThan(0);

    await graphql(h.api, SET_RETENTION, { input: { projectId: project.projectId, retentionDays: 5 } }, project.apiKey);
    const removed = await new RetentionRepository(h.services.clickhouse).removeOutlived(
      { tenantId: project.tenantId, projectId: project.projectId },
      5,
    );
    expect(removed).toContain('spans');
    // Every table keyed by trace holds none of the old trace, and all it held of the recent one.
    expect(await stored(old)).toEqual(Object.fromEntries(tablesWithTraceIds.map((table) => [table, 0])));
    expect(await stored(recent)).toEqual(recentBefore);
    // A second sweep finds nothing left to delete.
    expect(
      await new RetentionRepository(h.services.clickhouse).removeOutlived({ tenantId: project.tenantId, projectId: project.projectId }, 5),
    ).toEqual([]);
  }, 120_000);

  it('empties stored cost reports past the retention, keeping their windows so none is made again', async () => {
    const project = await h.newProject('retention-reports');
    await graphql(h.api, SET_RETENTION, { input: { projectId: project.projectId, retentionDays: RETENTION_DAYS } }, project.apiKey);
    const now = Date.now();
    const windows = [now - (RETENTION_DAYS + 10) * DAY_MS, now - 2 * DAY_MS];
    const ids: string[] = [];
    for (const start of windows) {
      const { rows } = await h.services.pg.query<{ id: string }>(
        `INSERT INTO cost_reports (tenant_id, project_id, window_start, window_end, report, delivery_status)
         VALUES ($1, $2, $3, $4, '{"totals":{}}'::jsonb, 'pending') RETURNING id`,
        [project.tenantId, project.projectId, new Date(start), new Date(start + DAY_MS)],
      );
      ids.push(rows[0]!.id);
    }
    expect(await h.services.costReports.expireReports()).toBeGreaterThanOrEqual(1);
    const listed = await graphql<{ costReports: Array<{ id: string }>; old: unknown }>(
      h.api,
      'query($old: ID!) { costReports(first: 10) { id } old: costReport(id: $old) { id } }',
      { old: ids[0] },
      project.apiKey,
    );
    expect(listed.errors).toBeUndefined();
    expect(listed.data).toEqual({ costReports: [{ id: ids[1] }], old: null });
    const { rows } = await h.services.pg.query<{ id: string; report: unknown; expired: boolean; delivery_status: string }>(
      'SELECT id, report, expired_at IS NOT NULL AS expired, delivery_status FROM cost_reports WHERE project_id = $1 ORDER BY window_start',
      [project.projectId],
    );
    // The expired report's row stays (its window is taken), without its content, and is not delivered.
    expect(rows).toEqual([
      { id: ids[0], report: {}, expired: true, delivery_status: 'failed' },
      { id: ids[1], report: { totals: {} }, expired: false, delivery_status: 'pending' },
    ]);
  });

  it("partitions every table's rows by when they expire, and drops a partition whole once it has", async () => {
    const now = Date.now();
    const tables = await h.query<{ name: string; partition_key: string }>(
      'SELECT name, partition_key FROM system.tables WHERE database = currentDatabase() AND name IN {names:Array(String)}',
      { names: PROJECT_TABLES.filter((t) => RETAINED_SINCE[t] !== null) },
    );
    expect(tables.map((t) => t.name).sort()).toEqual(PROJECT_TABLES.filter((t) => RETAINED_SINCE[t] !== null).sort());
    const project = `retention-parts-${now}`;
    for (const { name, partition_key } of tables) {
      // The column the table is partitioned and expired by: `if(retention_days = 0, toYYYYMM(<column>), …)`.
      const column = /toYYYYMM\((\w+)\)/.exec(partition_key)![1]!;
      const write = (at: number, days: number) =>
        h.query(
          `INSERT INTO ${name} (tenant_id, project_id, ${column}, retention_days)
           SELECT 'retention-parts', {p:String}, fromUnixTimestamp64Milli(toInt64({at:Int64}), 'UTC'), {days:UInt16}`,
          { p: project, at, days },
        );
      // One row 20 days old under a 10-day retention (expired), one written now under the same (kept 10 more days).
      await write(now - 20 * DAY_MS, 10);
      await write(now, 10);
    }
    const expectedPartition = spanPartition(BigInt(now) * 1_000_000n, 10);
    // A write to a table a view reads writes the view's table too (spans → traces, span_facts…): those
    // rows are the test's as well, expired and kept alike.
    const columnOf = new Map(tables.map(({ name, partition_key }) => [name, /toYYYYMM\((\w+)\)/.exec(partition_key)![1]!]));
    type Left = { table: string; expired: number; kept: boolean; partitions: string[] };
    let left: Left[] = [];
    for (const deadline = Date.now() + 90_000; Date.now() < deadline;) {
      left = [];
      for (const { name } of tables) {
        const [row] = await h.query<{ expired: string; kept: string; partitions: string[] }>(
          `SELECT countIf(${columnOf.get(name)} < fromUnixTimestamp64Milli(toInt64({cutoff:Int64}), 'UTC')) AS expired, count() - expired AS kept,
                  groupUniqArray(_partition_id) AS partitions
           FROM ${name} WHERE project_id = {p:String}`,
          { p: project, cutoff: now - 15 * DAY_MS },
        );
        left.push({ table: name, expired: Number(row!.expired), kept: Number(row!.kept) > 0, partitions: row!.partitions });
      }
      if (left.every((t) => t.expired === 0)) break;
      await sleep(100);
    }
    // Each table kept the rows that are not expired, in the partition of the week they expire in, and none of the others.
    expect(left).toEqual(tables.map(({ name }) => ({ table: name, expired: 0, kept: true, partitions: [String(expectedPartition)] })));
  }, 120_000);
});
