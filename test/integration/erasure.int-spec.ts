import { DeadLetterRepository, ERASED_TRACE_TABLES, type DeadLetter } from '@spanforge/ingest';
import { INGEST_QUEUE, packExportBody, type IngestJob } from '@spanforge/queue';
import { SpanRecorder, graphql } from '../support';
import { expectedTrace, recordAgentTrace, sendAgentTrace } from './agent-trace';
import { startIngestHarness, type IngestHarness } from './ingest-harness';
import { NS_PER_MS, hex, jsonExport, jsonSpan, type JsonAnyValue } from './otlp-json';
import { JSON_TYPE, postTraces } from './raw-otlp';
import { failingStatements, type StatementFault } from './statement-faults';

/*
 * Erasure (docs/data-policy.md, "Erasure"): from eraseData's answer no query or aggregate returns
 * the erased traces; once the job is COMPLETED no table holds a row of them. Expected figures are
 * computed from what is sent: what is left is the one trace not erased.
 */

const CALL = { model: 'gpt-4o-mini', provider: 'openai', input: 700, cacheRead: 0, output: 50 };
const ERASE = `mutation($input: EraseDataInput!) { eraseData(input: $input) { id status requestedAt completedAt traceCount } }`;
const ANSWERS = `query($from: DateTime!, $to: DateTime!) {
  traces(filter: { from: $from, to: $to }, first: 20) { totalCount nodes { traceId } }
  sessions(filter: { from: $from, to: $to }, first: 20) { totalCount nodes { sessionId costUsd traceCount } }
  costBreakdown(groupBy: [MODEL], filter: { from: $from, to: $to }) { keys costUsd spanCount }
  metrics(query: { view: SPANS, measures: [COUNT, COST_USD], from: $from, to: $to }) { series { points { values } } }
  traceMetrics: metrics(query: { view: TRACES, measures: [COUNT, COST_USD], granularity: HOUR, from: $from, to: $to }) { series { points { values } } }
}`;

interface Answers {
  traces: { totalCount: number; nodes: Array<{ traceId: string }> };
  sessions: { totalCount: number; nodes: Array<{ sessionId: string; costUsd: number; traceCount: number }> };
  costBreakdown: Array<{ keys: string[]; costUsd: number; spanCount: number }>;
  metrics: { series: Array<{ points: Array<{ values: Array<number | null> }> }> };
  traceMetrics: { series: Array<{ points: Array<{ values: Array<number | null> }> }> };
}

/** The sum of each measure over every point of every series. */
const totals = (answer: Answers['metrics']): number[] =>
  answer.series.flatMap((s) => s.points).reduce((sum, p) => sum.map((n, i) => n + (p.values[i] ?? 0)), [0, 0]);

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** A 500 ms gpt-4o-mini chat span as OTLP/JSON, starting at `startMs`, with these tokens and attributes. */
const chatSpan = (
  traceId: string,
  startMs: number,
  tokens: { input: number; output: number },
  attributes: Record<string, JsonAnyValue>,
  parentSpanId?: string,
) => {
  const at = BigInt(startMs) * NS_PER_MS;
  return jsonSpan({
    traceId,
    parentSpanId,
    name: 'chat gpt-4o-mini',
    start: at,
    end: at + 500n * NS_PER_MS,
    attributes: {
      ...attributes,
      'gen_ai.operation.name': { stringValue: 'chat' },
      'gen_ai.request.model': { stringValue: 'gpt-4o-mini' },
      'gen_ai.usage.input_tokens': { intValue: String(tokens.input) },
      'gen_ai.usage.output_tokens': { intValue: String(tokens.output) },
    },
  });
};

describe('erasure', () => {
  let h: IngestHarness;
  let faults: StatementFault[] = [];
  beforeAll(async () => {
    h = await startIngestHarness(
      {},
      {
        // The seam: the API's and the worker's ClickHouse client, failing a named statement of a project once.
        beforeWorkers: (infra) => {
          faults = failingStatements(infra.clickhouse, 'the request stops at');
        },
      },
    );
  });
  afterAll(() => h?.stop());

  /** No table that names a trace holds a row of this one. */
  const expectNoRowsOf = async (projectId: string, traceId: string) => {
    for (const table of ERASED_TRACE_TABLES) {
      const [row] = await h.query<{ n: string }>(
        `SELECT count() AS n FROM ${table} WHERE project_id = {p:String} AND trace_id = {t:String}`,
        {
          p: projectId,
          t: traceId,
        },
      );
      expect({ table, rows: Number(row!.n) }).toEqual({ table, rows: 0 });
    }
  };

  /** What a key's dashboards show over a range (ANSWERS), answered without errors. */
  const answersOf = async (apiKey: string, range: { from: string; to: string }): Promise<Answers> => {
    const answer = await graphql<Answers>(h.api, ANSWERS, range, apiKey);
    expect(answer.errors).toBeUndefined();
    return answer.data!;
  };

  it("leaves a user's and a session's traces out of every answer from eraseData's answer, and out of every table once completed", async () => {
    const project = await h.newProject('erasure');
    const start = Date.now() - 3_600_000;
    // Session "erase-session": two traces; session "keep": one; and a user's own trace, sent as OTLP/JSON.
    const erasedSession = [
      await sendAgentTrace(h, project, { session: 'erase-session', calls: [CALL], start }, 0),
      await sendAgentTrace(h, project, { session: 'erase-session', calls: [CALL], start: start + 10_000 }, 1),
    ];
    const keptRecorder = new SpanRecorder();
    recordAgentTrace(keptRecorder, { session: 'keep', calls: [CALL], start: start + 20_000 });
    const kept = expectedTrace(keptRecorder.finished());
    const keptId = await sendAgentTrace(h, project, { session: 'keep', calls: [CALL], start: start + 20_000 }, 2);
    const userTrace = hex(16);
    const userSpan = chatSpan(
      userTrace,
      start + 30_000,
      { input: 100, output: 10 },
      {
        'user.id': { stringValue: 'erase-me@example.com' },
        'session.id': { stringValue: 'user-session' },
      },
    );
    expect((await postTraces(h.http, jsonExport([userSpan]), { type: JSON_TYPE, key: project.apiKey })).status).toBe(200);
    // Feedback on an erased trace: it goes with it.
    const feedback = await fetch(`${h.api}/v1/feedback`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${project.apiKey}` },
      body: JSON.stringify({ traceId: erasedSession[0], name: 'helpful', value: 1 }),
    });
    expect(feedback.status).toBe(202);

    const range = { from: new Date(start - 3_600_000).toISOString(), to: new Date(Date.now() + 3_600_000).toISOString() };
    const answers = () => answersOf(project.apiKey, range);
    let before = await answers();
    for (
      let i = 0;
      i < 100 &&
      (before.traces.nodes.length < 4 ||
        before.traces.totalCount < 4 ||
        before.sessions.nodes.length < 3 ||
        totals(before.traceMetrics)[0] !== 4);
      i++
    ) {
      await sleep(100);
      before = await answers();
    }
    expect(before.traces.totalCount).toBe(4);

    const erase = async (input: Record<string, unknown>) => {
      const answer = await graphql<{ eraseData: { id: string; status: string; traceCount: number; completedAt: string | null } }>(
        h.api,
        ERASE,
        { input: { projectId: project.projectId, ...input } },
        project.apiKey,
      );
      expect(answer.errors).toBeUndefined();
      return answer.data!.eraseData;
    };
    // Dead letters as the worker keeps them (a span row the store refused, an export whose retries
    // ran out): those of erased traces go with them, the kept trace's stays.
    const letter = (id: string, kind: DeadLetter['kind'], payload: string): DeadLetter => ({
      tenantId: project.tenantId,
      projectId: project.projectId,
      id,
      kind,
      reason: 'store_refused',
      error: 'injected',
      exportId: id,
      spans: 1,
      payload,
      deadLetteredAt: Date.now(),
      replayedAt: null,
      retentionDays: 0,
    });
    const exportJob = (spans: Array<Record<string, unknown>>) =>
      JSON.stringify({ name: 'export', data: { v: 1, format: 'json', ...packExportBody(jsonExport(spans)) } });
    await new DeadLetterRepository(h.services.clickhouse).add([
      letter('row-erased', 'span_row', JSON.stringify({ trace_id: erasedSession[1], session_id: 'erase-session', name: 'chat' })),
      letter('export-erased', 'export_job', exportJob([userSpan])),
      letter('row-kept', 'span_row', JSON.stringify({ trace_id: keptId, session_id: 'keep', name: 'chat' })),
    ]);
    const bySession = await erase({ sessionId: 'erase-session' });
    const byUser = await erase({ userId: 'erase-me@example.com' });
    expect(bySession).toMatchObject({ status: 'PENDING', traceCount: 2, completedAt: null });
    expect(byUser).toMatchObject({ traceCount: 1 });

    // From the answer on: only the kept trace, whatever is asked, aggregates included.
    const expectKeptOnly = (a: Answers) => {
      expect(a.traces).toEqual({ totalCount: 1, nodes: [{ traceId: keptId }] });
      expect(a.sessions).toEqual({
        totalCount: 1,
        nodes: [{ sessionId: 'keep', costUsd: expect.closeTo(kept.costUsd, 9), traceCount: 1 }],
      });
      const model = a.costBreakdown.find((row) => row.keys[0] === CALL.model);
      expect(model).toEqual({ keys: [CALL.model], costUsd: expect.closeTo(kept.costUsd, 9), spanCount: kept.llmCalls });
      const points = a.metrics.series.flatMap((s) => s.points);
      expect(points.map((p) => p.values[0])).toEqual([kept.spanCount]);
      expect(points[0]!.values[1]).toBeCloseTo(kept.costUsd, 9);
      const [traceCount, traceCost] = totals(a.traceMetrics);
      expect(traceCount).toBe(1);
      expect(traceCost).toBeCloseTo(kept.costUsd, 9);
    };
    expectKeptOnly(await answers());
    const trace = await graphql<{ trace: unknown }>(
      h.api,
      'query($id: String!) { trace(traceId: $id) { traceId } }',
      { id: erasedSession[0] },
      project.apiKey,
    );
    expect(trace.data!.trace).toBeNull();

    // The job runs in the worker; once COMPLETED, no table holds a row of the erased traces.
    const jobOf = async (id: string) =>
      (
        await graphql<{ erasureJob: { status: string; completedAt: string | null } | null }>(
          h.api,
          'query($id: ID!) { erasureJob(id: $id) { status completedAt } }',
          { id },
          project.apiKey,
        )
      ).data!.erasureJob;
    for (const job of [bySession, byUser]) {
      let state = await jobOf(job.id);
      // The worker looks for jobs every 2 s; its deletes mask the rows at once (patch parts).
      for (const deadline = Date.now() + 60_000; Date.now() < deadline && state?.status !== 'COMPLETED';) {
        await sleep(100);
        state = await jobOf(job.id);
      }
      expect(state).toMatchObject({ status: 'COMPLETED', completedAt: expect.any(String) });
    }
    const erased = [...erasedSession, userTrace];
    for (const table of ERASED_TRACE_TABLES) {
      const [row] = await h.query<{ n: string }>(
        `SELECT count() AS n FROM ${table} WHERE project_id = {p:String} AND trace_id IN {t:Array(String)}`,
        {
          p: project.projectId,
          t: erased,
        },
      );
      expect({ table, rows: Number(row!.n) }).toEqual({ table, rows: 0 });
    }
    for (const table of ['sessions', 'session_figures', 'session_minutes']) {
      const [row] = await h.query<{ n: string }>(
        `SELECT count() AS n FROM ${table} WHERE project_id = {p:String} AND session_id IN ('erase-session', 'user-session')`,
        { p: project.projectId },
      );
      expect({ table, rows: Number(row!.n) }).toEqual({ table, rows: 0 });
    }
    // The trace-metrics hours that summed the erased traces keep only their computation from what is left.
    const computations = await h.query<{ n: string }>(
      'SELECT sum(traces) AS n FROM trace_metrics_hour WHERE project_id = {p:String} GROUP BY hour, computed_at',
      { p: project.projectId },
    );
    expect(Math.max(...computations.map((row) => Number(row.n)))).toBe(1);
    const letters = await h.query<{ id: string }>('SELECT id FROM dead_letters WHERE project_id = {p:String} ORDER BY id', {
      p: project.projectId,
    });
    expect(letters.map((row) => row.id)).toEqual(['row-kept']);
    // What is left is whole, and the answers are the same once the rows are gone.
    const [left] = await h.query<{ n: string }>('SELECT count() AS n FROM spans FINAL WHERE project_id = {p:String}', {
      p: project.projectId,
    });
    expect(Number(left!.n)).toBe(kept.spanCount);
    expectKeptOnly(await answers());
    // The request is on record: who asked, for what, when.
    const { rows } = await h.services.pg.query<{ requested_by: string; session_id: string | null; user_id: string | null }>(
      'SELECT requested_by, session_id, user_id FROM erasure_jobs WHERE project_id = $1 ORDER BY requested_at',
      [project.projectId],
    );
    expect(rows).toEqual([
      { requested_by: `key:${project.apiKeyId}`, session_id: 'erase-session', user_id: null },
      { requested_by: `key:${project.apiKeyId}`, session_id: null, user_id: 'erase-me@example.com' },
    ]);
  }, 240_000);

  it('takes a trace erased by id out of its session totals from the answer on, the session keeping its other trace', async () => {
    const project = await h.newProject('erasure-part');
    const start = Date.now() - 3_600_000;
    const keptRecorder = new SpanRecorder();
    recordAgentTrace(keptRecorder, { session: 'mixed', calls: [CALL, CALL], start: start + 10_000 });
    const kept = expectedTrace(keptRecorder.finished());
    const erased = await sendAgentTrace(h, project, { session: 'mixed', calls: [CALL, CALL], start }, 0);
    const keptId = await sendAgentTrace(h, project, { session: 'mixed', calls: [CALL, CALL], start: start + 10_000 }, 1);
    // A later trace of the session, erased too: the session then ends minutes earlier.
    const late = await sendAgentTrace(h, project, { session: 'mixed', calls: [CALL, CALL], start: start + 300_000 }, 2);
    const range = { from: new Date(start - 60_000).toISOString(), to: new Date(start + 400_000).toISOString() };
    const lateRange = { from: new Date(start + 240_000).toISOString(), to: new Date(start + 400_000).toISOString() };
    const sessions = async (within = range) => {
      const answer = await graphql<Pick<Answers, 'sessions'>>(
        h.api,
        'query($from: DateTime!, $to: DateTime!) { sessions(filter: { from: $from, to: $to }, first: 5) { totalCount nodes { sessionId costUsd traceCount } } }',
        within,
        project.apiKey,
      );
      expect(answer.errors).toBeUndefined();
      return answer.data!.sessions;
    };
    let before = await sessions();
    for (let i = 0; i < 100 && before.nodes[0]?.traceCount !== 3; i++) {
      await sleep(100);
      before = await sessions();
    }
    expect(before.nodes).toEqual([{ sessionId: 'mixed', costUsd: expect.any(Number), traceCount: 3 }]);
    expect(before.nodes[0]!.costUsd).toBeGreaterThan(kept.costUsd);
    expect((await sessions(lateRange)).nodes).toEqual(before.nodes);

    const answer = await graphql<{ eraseData: { traceCount: number } }>(
      h.api,
      ERASE,
      { input: { projectId: project.projectId, traceIds: [erased, late] } },
      project.apiKey,
    );
    expect(answer.errors).toBeUndefined();
    expect(answer.data!.eraseData.traceCount).toBe(2);
    // Right after the answer, before any job: the session stays, with the kept trace's totals only,
    // and it ends with the kept trace: a range after that no longer holds it.
    expect(await sessions()).toEqual({
      totalCount: 1,
      nodes: [{ sessionId: 'mixed', costUsd: expect.closeTo(kept.costUsd, 9), traceCount: 1 }],
    });
    expect(await sessions(lateRange)).toEqual({ totalCount: 0, nodes: [] });
    const traces = await graphql<{ traces: { nodes: Array<{ traceId: string }> } }>(
      h.api,
      'query($from: DateTime!, $to: DateTime!) { traces(filter: { from: $from, to: $to }, first: 5) { nodes { traceId } } }',
      range,
      project.apiKey,
    );
    expect(traces.data!.traces.nodes).toEqual([{ traceId: keptId }]);
  }, 120_000);

  it.each([
    ['after its tombstones, before the aggregates are recomputed', 'erasure.refresh_cost_minute'],
    ['before its tombstones landed', 'erasure.insert_tombstones'],
  ])(
    'records the job of a request that stops %s, and a worker finishes the erasure',
    async (_when, statement) => {
      const project = await h.newProject('erasure-stopped');
      const start = Date.now() - 3_600_000;
      const erased = await sendAgentTrace(h, project, { session: 'stopped', calls: [CALL], start }, 0);
      const range = { from: new Date(start - 60_000).toISOString(), to: new Date(Date.now() + 60_000).toISOString() };
      const answers = () => answersOf(project.apiKey, range);
      // The trace's figures and rollups in place first (its spans are stored; its upkeep may still run).
      let before = await answers();
      // One request's fields are read at different moments (a read may run beside the upkeep): all of them are waited for.
      for (
        let i = 0;
        i < 100 && (before.traces.totalCount < 1 || before.sessions.nodes.length < 1 || totals(before.traceMetrics)[0] !== 1);
        i++
      ) {
        await sleep(100);
        before = await answers();
      }
      expect(before.traces.totalCount).toBe(1);
      expect(before.sessions.totalCount).toBe(1);
      const fault: StatementFault = { projectId: project.projectId, statement };
      faults.push(fault);

      const answer = await graphql(h.api, ERASE, { input: { projectId: project.projectId, traceIds: [erased] } }, project.apiKey);
      expect(fault.fired).toBe(true);
      expect(answer.errors?.[0]?.extensions?.code).toBe('UNAVAILABLE');
      const jobId = /job ([0-9a-f-]{36})/.exec(answer.errors![0]!.message)?.[1];
      expect(jobId).toBeDefined();

      // The job the answer names is with the workers, and they finish it: no table holds a row of the trace.
      const jobOf = async () =>
        (
          await graphql<{ erasureJob: { status: string; traceCount: number } | null }>(
            h.api,
            'query($id: ID!) { erasureJob(id: $id) { status traceCount } }',
            { id: jobId },
            project.apiKey,
          )
        ).data!.erasureJob;
      let state = await jobOf();
      // Minutes, not seconds: on a CI machine running other suites beside this one, a job's wait for
      // the engine to apply its deletes (awaitDeletes) has taken over a minute.
      for (const deadline = Date.now() + 240_000; Date.now() < deadline && state?.status !== 'COMPLETED';) {
        await sleep(250);
        state = await jobOf();
      }
      expect(state).toEqual({ status: 'COMPLETED', traceCount: 1 });
      await expectNoRowsOf(project.projectId, erased);
      const after = await answers();
      expect(after.traces).toEqual({ totalCount: 0, nodes: [] });
      expect(after.sessions).toEqual({ totalCount: 0, nodes: [] });
      expect(after.costBreakdown).toEqual([]);
      expect(totals(after.traceMetrics)).toEqual([0, 0]);
    },
    300_000,
  );

  it('keeps a span of an erased trace that arrives after the job out of its session, and runs the job again to remove it', async () => {
    const project = await h.newProject('erasure-late');
    const start = Date.now() - 3_600_000;
    const keptRecorder = new SpanRecorder();
    recordAgentTrace(keptRecorder, { session: 'late', calls: [CALL], start: start + 10_000 });
    const kept = expectedTrace(keptRecorder.finished());
    const erased = await sendAgentTrace(h, project, { session: 'late', calls: [CALL], start }, 0);
    const keptId = await sendAgentTrace(h, project, { session: 'late', calls: [CALL], start: start + 10_000 }, 1);
    const range = { from: new Date(start - 60_000).toISOString(), to: new Date(start + 120_000).toISOString() };
    const answers = () => answersOf(project.apiKey, range);
    let before = await answers();
    for (let i = 0; i < 100 && before.sessions.nodes[0]?.traceCount !== 2; i++) {
      await sleep(100);
      before = await answers();
    }
    expect(before.sessions.nodes).toEqual([{ sessionId: 'late', costUsd: expect.any(Number), traceCount: 2 }]);

    const answer = await graphql<{ eraseData: { id: string } }>(
      h.api,
      ERASE,
      { input: { projectId: project.projectId, traceIds: [erased] } },
      project.apiKey,
    );
    expect(answer.errors).toBeUndefined();
    const jobOf = async () =>
      (
        await graphql<{ erasureJob: { status: string; completedAt: string | null } }>(
          h.api,
          'query($id: ID!) { erasureJob(id: $id) { status completedAt } }',
          { id: answer.data!.eraseData.id },
          project.apiKey,
        )
      ).data!.erasureJob;
    const completedAfter = async (after: string | null) => {
      let job = await jobOf();
      // Minutes: a job's wait for the engine to apply its deletes has taken over a minute on a busy CI machine.
      for (const deadline = Date.now() + 240_000; Date.now() < deadline;) {
        if (job.status === 'COMPLETED' && (after === null || job.completedAt! > after)) break;
        await sleep(250);
        job = await jobOf();
      }
      return job;
    };
    const first = await completedAfter(null);
    expect(first.status).toBe('COMPLETED');

    // A span of the erased trace sent after its job (a client's retry, an agent still at work), priced, naming
    // another session than the trace had when erased: that session holds nothing but the erased trace.
    const lateSpan = chatSpan(
      erased,
      start + 5_000,
      { input: 1000, output: 100 },
      { 'session.id': { stringValue: 'late-elsewhere' } },
      hex(8),
    );
    expect((await postTraces(h.http, jsonExport([lateSpan]), { type: JSON_TYPE, key: project.apiKey })).status).toBe(200);
    const queue = h.services.queues.queue<IngestJob>(INGEST_QUEUE);
    for (const deadline = Date.now() + 60_000; ;) {
      const counts = await queue.getJobCounts('waiting', 'active', 'delayed');
      if (counts.waiting + counts.active + counts.delayed === 0) break;
      if (Date.now() > deadline) throw new Error(`the late span's job did not finish: ${JSON.stringify(counts)}`);
      await sleep(100);
    }
    // Its round has run: the session's figures still hold the kept trace alone.
    const expected = { totalCount: 1, nodes: [{ sessionId: 'late', costUsd: expect.closeTo(kept.costUsd, 9), traceCount: 1 }] };
    expect((await answers()).sessions).toEqual(expected);

    // The job is run again, and no table holds a row of the trace once it completes.
    const again = await completedAfter(first.completedAt);
    expect(again).toEqual({ status: 'COMPLETED', completedAt: expect.any(String) });
    expect(again.completedAt! > first.completedAt!).toBe(true);
    await expectNoRowsOf(project.projectId, erased);
    // No rollup row of either session lists it (the sessions page reads their figures, computed from these).
    const [listed] = await h.query<{ n: string }>(
      'SELECT count() AS n FROM sessions WHERE project_id = {p:String} AND has(trace_ids, {t:String})',
      { p: project.projectId, t: erased },
    );
    expect(Number(listed!.n)).toBe(0);
    const after = await answers();
    expect(after.sessions).toEqual(expected);
    expect(after.traces.nodes).toEqual([{ traceId: keptId }]);
    expect(after.costBreakdown.reduce((sum, row) => sum + row.costUsd, 0)).toBeCloseTo(kept.costUsd, 9);
  }, 600_000);

  it('refuses a request that names nothing, and a key of another project', async () => {
    const project = await h.newProject('erasure-refusals');
    const other = await h.newProject('erasure-other');
    const code = async (input: Record<string, unknown>, key: string) =>
      (await graphql(h.api, ERASE, { input: { projectId: project.projectId, ...input } }, key)).errors?.[0]?.extensions?.code;
    expect(await code({}, project.apiKey)).toBe('BAD_USER_INPUT');
    expect(await code({ traceIds: [hex(16)] }, other.apiKey)).toBe('FORBIDDEN');
  });
});
