import { PROJECT_TABLES, RETAINED_SINCE } from '@spanforge/clickhouse';
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
    for (let i = 0; i < 50 && (before.traces.nodes.length < 2 || before.sessions.nodes.length < 2); i++) {
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
    const unscoped = new ScopedClickHouse(h.services.clickhouse, scope);
    const withTraceIds = new Set(
      (await h.query<{ table: string }>("SELECT table FROM system.columns WHERE database = currentDatabase() AND name = 'trace_id'")).map(
        (row) => row.table,
      ),
    );
    for (const table of PROJECT_TABLES) {
      const retained = RETAINED_SINCE[table];
      // Rows of a day, hour or minute (trace_cost_days: a trace's cost on a day) leave when the whole
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
      if (table === 'spans') expect(await count(unscoped)).toBeGreaterThan(0);
    }
  }, 60_000);
});
