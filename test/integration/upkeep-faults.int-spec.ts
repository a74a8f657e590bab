import { ClockBound, ClockOffsetError, clockBoundClient, filedMinutesSql, storedTracesParams } from '@spanforge/clickhouse';
import { SpanRepository } from '@spanforge/ingest';
import { PriceTable, costOf } from '@spanforge/pricing';
import { clockProbe } from '@spanforge/runtime';
import { INGEST_JOB_OPTIONS, INGEST_QUEUE, IngestJobName, type ExportJob, type IngestJob } from '@spanforge/queue';
import { graphql } from '../support';
import { startIngestHarness, type IngestHarness } from './ingest-harness';
import { JSON_TYPE, postTraces } from './raw-otlp';
import { NS_PER_MS, hex, jsonExport, jsonSpan } from './otlp-json';
import { failingStatements, type StatementFault } from './statement-faults';

/*
 * An upkeep round that stops part-way, injected at the worker's ClickHouse seam: a statement of one
 * project's round fails as a crash would stop it, the export's job fails and is retried, and the
 * retry must leave every figure as if the round had never stopped. The case that needs care is a
 * trace whose late root moves its start a minute earlier: the round writes its new figures (filed
 * under the new minute), then an empty row under the minute it left, then recomputes both minutes'
 * rollups. Stopped between those, the retry finds figures that already show the new minute; and a
 * job that fails there for good (its last attempt) has no retry at all: it goes to the dead letters.
 * And the clocks the upkeep's stamps come from, as several servers of a cluster would have them.
 */

const MODEL = 'gpt-4o-mini';
const at = (iso: string) => BigInt(Date.parse(iso)) * NS_PER_MS;
const price = PriceTable.bundled().lookup(MODEL, 'openai', Date.parse('2026-11-04T10:20:00Z'))!;

/** A 20-s chat call of MODEL starting at `startIso`, with these tokens. */
const call = (traceId: string, parentSpanId: string | undefined, startIso: string, input: number, output: number) =>
  jsonSpan({
    traceId,
    ...(parentSpanId ? { parentSpanId } : {}),
    name: 'chat',
    start: at(startIso),
    end: at(startIso) + 20_000n * NS_PER_MS,
    attributes: {
      'gen_ai.operation.name': { stringValue: 'chat' },
      'gen_ai.provider.name': { stringValue: 'openai' },
      'gen_ai.request.model': { stringValue: MODEL },
      'gen_ai.usage.input_tokens': { intValue: String(input) },
      'gen_ai.usage.output_tokens': { intValue: String(output) },
    },
  });

let h: IngestHarness;
/** A statement of a project's upkeep to fail once, as a crash right before it would stop the round. */
let faults: StatementFault[] = [];

beforeAll(async () => {
  h = await startIngestHarness(
    {},
    {
      beforeWorkers: (infra) => {
        faults = failingStatements(infra.clickhouse, 'the round stops before');
      },
    },
  );
});
afterAll(async () => {
  await h?.stop();
});

describe('an upkeep round that stops part-way', () => {
  it.each([
    ['before the empty row under the minute the trace left', 'retried', 'ingest.vacate_trace_minutes'],
    ['after the empty row, before the minutes are recomputed', 'retried', 'ingest.refresh_cost_minute'],
    ['before the empty row under the minute the trace left', 'dead-lettered', 'ingest.vacate_trace_minutes'],
    ['after the empty row, before the minutes are recomputed', 'dead-lettered', 'ingest.refresh_cost_minute'],
  ])('counts a moved trace once when it stops %s and its job is %s', async (_when, ending, statement) => {
    const own = await h.newProject();
    const send = async (spans: Array<Record<string, unknown>>) =>
      expect((await postTraces(h.http, jsonExport(spans, 'fault-service'), { type: JSON_TYPE, key: own.apiKey })).status).toBe(200);
    const rows = async <T>(sql: string) => h.query<T>(sql, { p: own.projectId });
    // Trace M: its call (10:20:30) first, filed under 10:20; its root (from 10:19:40) later moves it to 10:19.
    // Trace S starts in 10:20 and stays there.
    const [moving, movingRoot, staying] = [hex(16), hex(8), hex(16)];
    const calls = [
      { span: call(moving, movingRoot, '2026-11-04T10:20:30Z', 1_000, 200), input: 1_000, output: 200 },
      { span: call(staying, undefined, '2026-11-04T10:20:10Z', 3_000, 400), input: 3_000, output: 400 },
    ];
    await send(calls.map((c) => c.span));
    const costMinutes = () =>
      rows<{ minute: string; spans: string; cost: number }>(
        `SELECT toString(minute) AS minute, sum(spans) AS spans, sum(cost_usd) AS cost FROM cost_minute FINAL
         WHERE project_id = {p:String} GROUP BY minute HAVING spans > 0 ORDER BY minute`,
      );
    const settled = async (done: (minutes: Array<{ minute: string; spans: string }>) => boolean) => {
      const deadline = Date.now() + 30_000;
      while (!done(await costMinutes())) {
        if (Date.now() > deadline) throw new Error(`the rollups did not settle: ${JSON.stringify(await costMinutes())}`);
        await new Promise((r) => setTimeout(r, 100));
      }
    };
    // Both calls filed under 10:20 before M's root comes.
    await settled((m) => m.length === 1 && Number(m[0]!.spans) === 2);

    const fault: StatementFault = { projectId: own.projectId, statement };
    faults.push(fault);
    const root = jsonSpan({
      traceId: moving,
      spanId: movingRoot,
      name: 'agent.run',
      start: at('2026-11-04T10:19:40Z'),
      end: at('2026-11-04T10:21:00Z'),
    });
    const queue = h.services.queues.queue<IngestJob>(INGEST_QUEUE);
    let deadLettered: string | undefined;
    if (ending === 'retried') await send([root]);
    else {
      // As the gateway queues it, but with one attempt: the one that stops fails it for good.
      const body = jsonExport([root], 'fault-service');
      const job: ExportJob = {
        v: 1,
        tenantId: own.tenantId,
        projectId: own.projectId,
        format: 'json',
        body: body.toString('base64'),
        receivedAt: Date.now(),
        exportId: `fault-${hex(4)}`,
        receivedSpans: 1,
        acceptedSpans: 1,
        bytes: body.length,
      };
      deadLettered = (await queue.add(IngestJobName.Export, job, { ...INGEST_JOB_OPTIONS, attempts: 1 })).id;
    }
    // The root's job fails once and is retried (wait until the queue holds nothing more to do), or
    // fails for good (wait until the sweeper has moved it to the dead letters: it is gone from the queue).
    const deadline = Date.now() + 30_000;
    for (;;) {
      const counts = await queue.getJobCounts('waiting', 'active', 'delayed');
      const done =
        deadLettered === undefined
          ? counts.waiting + counts.active + counts.delayed === 0
          : (await queue.getJob(deadLettered)) === undefined;
      if (fault.fired && done) break;
      if (Date.now() > deadline) throw new Error(`the job did not finish: ${JSON.stringify(counts)}, fault fired: ${fault.fired}`);
      await new Promise((r) => setTimeout(r, 100));
    }
    const letters = await rows<{ id: string; reason: string }>('SELECT id, reason FROM dead_letters FINAL WHERE project_id = {p:String}');
    expect(letters).toStrictEqual(deadLettered === undefined ? [] : [{ id: `job:${deadLettered}`, reason: 'retries_exhausted' }]);
    const traceMinutes = () =>
      rows<{ minute: string; traces: string }>(
        `SELECT toString(minute) AS minute, sum(traces) AS traces FROM trace_metrics_minute FINAL
         WHERE project_id = {p:String} GROUP BY minute HAVING traces > 0 ORDER BY minute`,
      );

    // Each trace under its start minute only (M: its root and call; S: its one span), in the rollups as stored and in what the API answers.
    expect((await costMinutes()).map((m) => [m.minute, Number(m.spans)])).toStrictEqual([
      ['2026-11-04 10:19:00', 2],
      ['2026-11-04 10:20:00', 1],
    ]);
    expect((await traceMinutes()).map((m) => [m.minute, Number(m.traces)])).toStrictEqual([
      ['2026-11-04 10:19:00', 1],
      ['2026-11-04 10:20:00', 1],
    ]);
    const answer = await graphql<{
      costBreakdown: Array<{ keys: string[]; costUsd: number; spanCount: number }>;
      traces: { totalCount: number; nodes: Array<{ traceId: string }> };
    }>(
      h.api,
      `
        query ($day: TraceFilter, $minute: TraceFilter) {
          costBreakdown(groupBy: [MODEL], filter: $day) {
            keys
            costUsd
            spanCount
          }
          traces(filter: $minute, first: 10) {
            totalCount
            nodes {
              traceId
            }
          }
        }
      `,
      {
        day: { from: '2026-11-04T00:00:00Z', to: '2026-11-05T00:00:00Z' },
        minute: { from: '2026-11-04T10:20:00Z', to: '2026-11-04T10:21:00Z' },
      },
      own.apiKey,
    );
    const expectedCost = calls.reduce(
      (sum, c) => sum + costOf({ inputUncached: c.input, cacheRead: 0, cacheWrite: 0, output: c.output, reasoning: 0 }, price),
      0,
    );
    const byModel = answer.data!.costBreakdown.find((row) => row.keys[0] === MODEL)!;
    expect(byModel.spanCount).toBe(calls.length);
    expect(byModel.costUsd).toBeCloseTo(expectedCost, 9);
    // Over 10:20–10:21 only S: M starts at 10:19:40 now.
    expect(answer.data!.traces.nodes.map((n) => n.traceId)).toStrictEqual([staying]);
    expect(answer.data!.traces.totalCount).toBe(1);
  });
});

/*
 * Two rounds of one trace in the order a slow worker gives them: round A looks at the trace, round
 * B (another worker, after an insert A did not see) looks later and refreshes, then A refreshes
 * within its older look's bounds. A's figures miss the span outside them; stamped with A's look,
 * they lose to B's, and so does A's filing under the minute B moved the trace out of
 * (docs/architecture.md, "One look a round").
 */
describe('a round bounded by an older look', () => {
  /** A new project: sending to it, reading it, and its cost minutes ([minute, spans]) as they settle. */
  async function lookProject() {
    const own = await h.newProject();
    const send = async (spans: Array<Record<string, unknown>>) =>
      expect((await postTraces(h.http, jsonExport(spans, 'look-service'), { type: JSON_TYPE, key: own.apiKey })).status).toBe(200);
    const rows = async <T>(sql: string, params: Record<string, unknown> = {}) => h.query<T>(sql, { p: own.projectId, ...params });
    const filed = async () =>
      (
        await rows<{ minute: string; spans: string }>(
          `SELECT toString(minute) AS minute, sum(spans) AS spans FROM cost_minute FINAL
           WHERE project_id = {p:String} GROUP BY minute HAVING spans > 0 ORDER BY minute`,
        )
      ).map((m): [string, number] => [m.minute, Number(m.spans)]);
    const settled = async (expected: Array<[string, number]>) => {
      const deadline = Date.now() + 30_000;
      while (JSON.stringify(await filed()) !== JSON.stringify(expected)) {
        if (Date.now() > deadline) throw new Error(`the rollups did not settle: ${JSON.stringify(await filed())}`);
        await new Promise((r) => setTimeout(r, 100));
      }
    };
    return { ref: { tenantId: own.tenantId, projectId: own.projectId }, send, rows, filed, settled };
  }

  it("leaves a later look's figures and filings in place when it writes after them", async () => {
    const { ref, send, rows, filed, settled } = await lookProject();
    const [traceId, rootId] = [hex(16), hex(8)];
    const root = jsonSpan({
      traceId,
      spanId: rootId,
      name: 'agent.run',
      start: at('2026-11-04T10:19:40Z'),
      end: at('2026-11-04T10:21:00Z'),
    });
    await send([call(traceId, rootId, '2026-11-04T10:20:30Z', 1_000, 200)]);
    await settled([['2026-11-04 10:20:00', 1]]);

    // Round A's look: the call only, from 10:20:30.
    const repository = new SpanRepository(h.services.clickhouse);
    const { look } = await repository.storedTraces(ref, [traceId], []);
    expect(look?.groups).toEqual([expect.objectContaining({ from: '2026-11-04 10:20:30.000000000' })]);
    // Round B (the worker's own) stores the root and moves the trace to 10:19.
    await send([root]);
    await settled([['2026-11-04 10:19:00', 2]]);

    // Round A now refreshes within its look, as a round does, then the minutes it touched.
    const { minutes } = await repository.refreshTraceFigures(ref, [traceId], [], look);
    await repository.refreshDailyCosts(ref, minutes);
    await repository.refreshTraceMetrics(ref, minutes);

    // B's figures stand: from the root's start, with the call's cost.
    const [figures] = await rows<{ start: string; cost: number }>(
      `SELECT toString(start_time) AS start, cost_usd AS cost FROM trace_figures FINAL WHERE project_id = {p:String}`,
    );
    expect(figures!.start).toBe('2026-11-04 10:19:40.000000000');
    expect(figures!.cost).toBeCloseTo(costOf({ inputUncached: 1_000, cacheRead: 0, cacheWrite: 0, output: 200, reasoning: 0 }, price), 9);
    // Filed under 10:19 only: A's filing under 10:20 lost to the empty row B wrote there.
    expect(
      await rows<{ minute: string }>(
        `SELECT toString(minute) AS minute FROM trace_minutes FINAL WHERE project_id = {p:String} AND present = 1 ORDER BY minute`,
      ),
    ).toStrictEqual([{ minute: '2026-11-04 10:19:00' }]);
    expect(await filed()).toStrictEqual([['2026-11-04 10:19:00', 2]]);
  });

  it("empties its own filing when a later look's computation filed the trace under another minute", async () => {
    const { ref, send, rows, filed, settled } = await lookProject();
    const [traceId, rootId, firstCall] = [hex(16), hex(8), hex(8)];
    // A call at 10:21:10, filed under 10:21 by the worker's round.
    await send([{ ...call(traceId, rootId, '2026-11-04T10:21:10Z', 1_000, 200), spanId: firstCall }]);
    await settled([['2026-11-04 10:21:00', 1]]);
    // A second call at 10:20:30, stored by a worker whose round has not run yet: a copy of the first, inserted as the worker inserts.
    const [stored] = await rows<Record<string, unknown>>('SELECT * FROM spans WHERE project_id = {p:String} AND span_id = {s:String}', {
      s: firstCall,
    });
    const second = { ...stored, span_id: hex(8), start_time: '2026-11-04 10:20:30.000000000', end_time: '2026-11-04 10:20:50.000000000' };
    const repository = new SpanRepository(h.services.clickhouse);
    await repository.insertSpanLines([Buffer.from(`${JSON.stringify(second)}\n`)]);
    // That round's look (both calls, from 10:20:30); then another worker's round stores the root and files the trace under 10:19.
    const { look } = await repository.storedTraces(ref, [traceId], []);
    expect(look?.groups).toEqual([expect.objectContaining({ from: '2026-11-04 10:20:30.000000000' })]);
    await send([
      jsonSpan({ traceId, spanId: rootId, name: 'agent.run', start: at('2026-11-04T10:19:40Z'), end: at('2026-11-04T10:22:00Z') }),
    ]);
    await settled([['2026-11-04 10:19:00', 3]]);

    // The first round refreshes within its look: its own figures start at 10:20:30, and are filed under 10:20 until it sees the later ones.
    const { minutes } = await repository.refreshTraceFigures(ref, [traceId], [], look);
    await repository.refreshDailyCosts(ref, minutes);
    await repository.refreshTraceMetrics(ref, minutes);

    expect(
      await rows<{ minute: string }>(
        `SELECT toString(minute) AS minute FROM trace_minutes FINAL WHERE project_id = {p:String} AND present = 1 ORDER BY minute`,
      ),
    ).toStrictEqual([{ minute: '2026-11-04 10:19:00' }]);
    expect(await filed()).toStrictEqual([['2026-11-04 10:19:00', 3]]);
    const [figures] = await rows<{ start: string; cost: number }>(
      `SELECT toString(start_time) AS start, cost_usd AS cost FROM trace_figures FINAL WHERE project_id = {p:String}`,
    );
    expect(figures!.start).toBe('2026-11-04 10:19:40.000000000');
    expect(figures!.cost).toBeCloseTo(
      2 * costOf({ inputUncached: 1_000, cacheRead: 0, cacheWrite: 0, output: 200, reasoning: 0 }, price),
      9,
    );
  });

  it('reads a late span of a month-old trace in a group of its own, and files, prices and back-fills both traces of the round', async () => {
    const { ref, send, rows, filed, settled } = await lookProject();
    const [old, fresh] = [hex(16), hex(16)];
    const oldPrice = PriceTable.bundled().lookup(MODEL, 'openai', Date.parse('2026-10-05T08:00:00Z'))!;
    const cost = (p: typeof price, input: number, output: number) =>
      costOf({ inputUncached: input, cacheRead: 0, cacheWrite: 0, output, reasoning: 0 }, p);
    /** A span naming `session`. */
    const inSession = (span: Record<string, unknown>, session: string) => ({
      ...span,
      attributes: [...(span.attributes as unknown[]), { key: 'session.id', value: { stringValue: session } }],
    });
    // A month before, a call at 08:00:10, of no session.
    await send([call(old, undefined, '2026-10-05T08:00:10Z', 1_000, 200)]);
    await settled([['2026-10-05 08:00:00', 1]]);
    // One export (one round): a late call of that trace, starting before it (at 07:59:30) and naming
    // its session; and a new trace of two calls, one of them naming its session. The round's
    // rewrites give each trace's session to its other call, reading both traces in their own days.
    await send([
      inSession(call(old, undefined, '2026-10-05T07:59:30Z', 3_000, 100), 'session-old'),
      inSession(call(fresh, undefined, '2026-11-04T10:20:30Z', 500, 50), 'session-fresh'),
      call(fresh, undefined, '2026-11-04T10:20:40Z', 700, 70),
    ]);
    await settled([
      ['2026-10-05 07:59:00', 2],
      ['2026-11-04 10:20:00', 2],
    ]);
    const sessions = async () =>
      rows<{ trace: string; sessions: string[] }>(
        `SELECT trace_id AS trace, groupArray(session_id) AS sessions FROM spans FINAL WHERE project_id = {p:String}
         GROUP BY trace_id ORDER BY min(start_time)`,
      );
    const deadline = Date.now() + 30_000;
    while ((await sessions()).some((t) => t.sessions.includes(''))) {
      if (Date.now() > deadline) throw new Error(`the back-fill did not land: ${JSON.stringify(await sessions())}`);
      await new Promise((r) => setTimeout(r, 100));
    }
    expect(await sessions()).toEqual([
      { trace: old, sessions: ['session-old', 'session-old'] },
      { trace: fresh, sessions: ['session-fresh', 'session-fresh'] },
    ]);

    // The look puts the two traces in groups of their own, each in its own time.
    const repository = new SpanRepository(h.services.clickhouse);
    const { look } = await repository.storedTraces(ref, [old, fresh], []);
    expect(look?.groups).toEqual([
      { from: '2026-10-05 07:59:30.000000000', to: '2026-10-05 08:00:30.000000000', traceIds: [old] },
      { from: '2026-11-04 10:20:30.000000000', to: '2026-11-04 10:21:00.000000000', traceIds: [fresh] },
    ]);
    const expected = [
      {
        trace: old,
        start: '2026-10-05 07:59:30.000000000',
        cost: expect.closeTo(cost(oldPrice, 1_000, 200) + cost(oldPrice, 3_000, 100), 9),
      },
      { trace: fresh, start: '2026-11-04 10:20:30.000000000', cost: expect.closeTo(cost(price, 500, 50) + cost(price, 700, 70), 9) },
    ];
    const expectFigures = async () => {
      // Each trace's figures hold its every span; the old one starts at its late call and is filed there only.
      expect(
        await rows<{ trace: string; start: string; cost: number }>(
          `SELECT trace_id AS trace, toString(start_time) AS start, cost_usd AS cost FROM trace_figures FINAL
           WHERE project_id = {p:String} ORDER BY start_time`,
        ),
      ).toEqual(expected);
      expect(
        await rows<{ trace: string; minute: string }>(
          `SELECT trace_id AS trace, toString(minute) AS minute FROM trace_minutes FINAL WHERE project_id = {p:String} AND present = 1 ORDER BY minute`,
        ),
      ).toStrictEqual([
        { trace: old, minute: '2026-10-05 07:59:00' },
        { trace: fresh, minute: '2026-11-04 10:20:00' },
      ]);
      expect(await filed()).toStrictEqual([
        ['2026-10-05 07:59:00', 2],
        ['2026-11-04 10:20:00', 2],
      ]);
      // And each day's costs.
      expect(
        await rows<{ day: string; spans: number }>(
          `SELECT toString(day) AS day, sum(spans) AS spans FROM cost_daily FINAL WHERE project_id = {p:String} GROUP BY day HAVING spans > 0 ORDER BY day`,
        ),
      ).toStrictEqual([
        { day: '2026-10-05', spans: 2 },
        { day: '2026-11-04', spans: 2 },
      ]);
    };
    await expectFigures();

    // A refresh of a trace the look did not find (as a back-fill's is) groups the traces by their
    // time in trace_index and reads every group's bounds as it runs: the same figures.
    const { minutes } = await repository.refreshTraceFigures(ref, [old, fresh], [], { at: look!.at, groups: [look!.groups[0]!] });
    await repository.refreshDailyCosts(ref, minutes);
    await repository.refreshTraceMetrics(ref, minutes);
    await expectFigures();
  });

  it("reads a long run's weeks of filings only where its id may be beside a round of new traces, and empties the filing its start left", async () => {
    const { ref, send, rows, settled } = await lookProject();
    // A fixed id, so that which granules the bloom filter keeps is the same on every run.
    const long = 'a1'.repeat(16);
    const fresh = Array.from({ length: 300 }, () => hex(16));
    // Other traces' filings, two a minute through October: the project's month between the run's
    // start and its newest step, in a partition (a month) of their own, so that no merge puts one
    // of the run's filings in their granules.
    const others = 81_920;
    await h.services.clickhouse.command({
      query: `INSERT INTO trace_minutes (tenant_id, project_id, minute, trace_id, start_time, present, computed_at)
        SELECT {t:String}, {p:String}, toDateTime64('2026-10-01 00:00:00', 0, 'UTC') + toIntervalMinute(intDiv(number, 2)),
          lower(hex(MD5(toString(number)))), toDateTime64('2026-10-01 00:00:00', 9, 'UTC') + toIntervalMinute(intDiv(number, 2)), 1, now64(6)
        FROM numbers({n:UInt32})`,
      query_params: { t: ref.tenantId, p: ref.projectId, n: others },
    });
    // The run's first step at 11-04 10:20:30; then one export (one round) with a step that starts
    // five weeks earlier (a run that went on that long, whose early span came late) and 300 new traces.
    await send([call(long, undefined, '2026-11-04T10:20:30Z', 1_000, 200)]);
    await settled([['2026-11-04 10:20:00', 1]]);
    await send([
      call(long, undefined, '2026-09-30T08:00:10Z', 2_000, 300),
      ...fresh.map((traceId) => call(traceId, undefined, '2026-11-04T10:21:10Z', 500, 50)),
    ]);
    await settled([
      ['2026-09-30 08:00:00', 2],
      ['2026-11-04 10:21:00', fresh.length],
    ]);
    // The round read the run's filings over its five weeks in a group of its own and emptied 11-04 10:20.
    const filings = await rows<{ trace: string; minute: string }>(
      `SELECT trace_id AS trace, toString(minute) AS minute FROM trace_minutes FINAL
       WHERE project_id = {p:String} AND present = 1 AND trace_id IN {ids:Array(String)} ORDER BY minute, trace_id`,
      { ids: [long, ...fresh] },
    );
    expect(filings).toStrictEqual([
      { trace: long, minute: '2026-09-30 08:00:00' },
      ...[...fresh].sort().map((trace) => ({ trace, minute: '2026-11-04 10:21:00' })),
    ]);

    // The read as the round sends it (without the project's data policy filters), for its two
    // groups (the engine's memory of earlier reads off):
    // the run's group reads the granules of its weeks that its id may be in, not the other traces'
    // filings of October. In one condition OR'ed over the groups, the new traces' 300 ids would
    // match nearly every granule's filter, and October would be read whole.
    const groups = [[long], fresh];
    const plan = (
      await rows<{ explain: string }>(`EXPLAIN indexes = 1 ${filedMinutesSql(groups.length)}\nSETTINGS use_query_condition_cache = 0`, {
        tenantId: ref.tenantId,
        projectId: ref.projectId,
        ...storedTracesParams(groups),
      })
    ).map((line) => line.explain.replace(/^[\s│├└─]+/, ''));
    // Each read of trace_minutes: the granules its bloom filter was given, and those it kept.
    const kept = plan.flatMap((line, i) => {
      if (line !== 'Name: idx_trace_id') return [];
      const [after, before] = plan
        .slice(i)
        .find((l) => l.startsWith('Granules:'))!
        .replace('Granules: ', '')
        .split('/')
        .map(Number);
      return [{ before: before!, after: after! }];
    });
    expect(kept).toHaveLength(groups.length);
    const [longGroup, freshGroup] = kept as [{ before: number; after: number }, { before: number; after: number }];
    // The others' filings fill others / 8,192 granules of 8,192 rows, all within the run's weeks;
    // the filter may keep one or two of them (about 1 % a granule for one id).
    const othersGranules = others / 8_192;
    expect(longGroup.before).toBeGreaterThanOrEqual(othersGranules);
    expect(longGroup.before - longGroup.after).toBeGreaterThanOrEqual(othersGranules - 2);
    expect(freshGroup.after).toBeGreaterThanOrEqual(1);
  });
});

/*
 * Several workers on a cluster, each reaching a server with its own clock: the figures' stamps stay
 * ordered only while the servers' clocks agree within CLICKHOUSE_MAX_CLOCK_OFFSET_MS
 * (libs/clickhouse/src/clock-bound.ts). Here one server's clock is moved at the probe seam.
 */
describe("a cluster's clocks", () => {
  /** Added to what the ClickHouse server says the time is. */
  let skewMs = 0;
  /** The moved clock: ten times the bound's half-width. */
  const SKEW_MS = 5_000;

  function bound(): ClockBound {
    const probe = clockProbe(h.services.clickhouse, h.services.pg);
    const log = { info: () => undefined, error: () => undefined };
    // A bound of 1 s: wide enough for the round trips of a machine busy with the other suites (checks
    // on CI read 16 ± 19 ms, beyond the ±25 of a 50 ms bound, and 49 ± 53 ms, beyond the ±100 of a
    // 200 ms bound), far inside the moved clock (SKEW_MS).
    return new ClockBound({ ...probe, clickhouseMs: async () => (await probe.clickhouseMs()) + skewMs }, { maxOffsetMs: 1_000, log });
  }

  it("measures the server's clock against PostgreSQL's and refuses the upkeep's stamps while it is off", async () => {
    const clock = bound();
    skewMs = 0;
    const client = clockBoundClient(h.services.clickhouse, clock, 10);
    const repository = new SpanRepository(client);
    const project = { tenantId: 'clock-tenant', projectId: 'clock-project' };
    // Nothing is stamped before a check has said the clock is within.
    await expect(repository.refreshDailyCosts(project, [Date.UTC(2026, 10, 4, 10, 20)])).rejects.toThrow(/not known to be within/);
    // The same machine's clock on both sides: within the round trips' uncertainty.
    const reading = await clock.check();
    expect(Math.abs(reading.offsetMs)).toBeLessThanOrEqual(reading.uncertaintyMs + 1);
    await repository.refreshDailyCosts(project, [Date.UTC(2026, 10, 4, 10, 20)]);

    skewMs = SKEW_MS;
    await clock.check();
    await expect(repository.refreshDailyCosts(project, [Date.UTC(2026, 10, 4, 10, 20)])).rejects.toThrow(ClockOffsetError);
    // Reads that do not look at the clock go on.
    expect(await repository.erasedTraces(project, ['0af7651916cd43dd8448eb211c80319c'])).toEqual(new Map());

    skewMs = 0;
    await clock.check();
    await repository.refreshDailyCosts(project, [Date.UTC(2026, 10, 4, 10, 20)]);
  });
});
