import 'reflect-metadata';
import { rmSync } from 'node:fs';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { Pool } from 'undici';
import { WORKER_PARTICIPANT } from '@spanforge/clickhouse';
import { ScopedClickHouse, TraceRepository } from '@spanforge/query';
import type { BenchStack } from './bench-stack';
import { quiet, startBenchStack, temporaryDataDir } from './bench-stack';
import { buildCorpus } from './corpus';
import { argument, percentile, progress, writeResults } from './report';
import { sealSeededMinutes, seedVolume } from './seed-volume';

/**
 * `npm run bench:fairness [-- --seconds S] [--a-spans N] [--b-spans N] [--no-flood-ingest] [--no-flood-queries] [--concurrent N]`: project A floods ingest
 * at 10× its limit and runs 16 loops of the heaviest traces page (50 traces, each analysed) while project B exports at an
 * ordinary rate and runs the dashboard queries of bench:query. Reports, from one run: B's export
 * success rate under the flood, B's query p50 under the flood ÷ B's p50 on the idle server, A's
 * statement p50 (its heavy queries' answer time), what A was refused, and how long a 40-level
 * fragment bomb takes to refuse, without and with a key. The server runs with the product's
 * default API limits. The load runs in this process (lightly: undici, no parsing beyond status).
 */

const A_SPANS_PER_SECOND = 2_000;
/** The heaviest page a project may ask for: 50 traces (the most with per-trace analysis), each analysed. */
const HEAVY = '{ traces(first: 50) { nodes { traceId findings { kind } criticalPath { name } } } }';
const DASHBOARD = [
  '{ sessions(first: 5) { nodes { sessionId costUsd } totalCount } }',
  '{ costBreakdown(groupBy: [MODEL, DAY]) { keys costUsd } }',
  '{ latencyByIterations { iterations p99Ms } }',
  '{ traces(first: 20) { nodes { traceId durationMs costUsd } } }',
];

async function main(): Promise<void> {
  const seconds = Number(argument('--seconds', '20'));
  const dataDir = temporaryDataDir('spanforge-fairness-');
  // The product's defaults unless asked otherwise (--concurrent N: API_CONCURRENT_REQUESTS).
  const infra = await startBenchStack(dataDir, {
    API_REQUESTS_PER_SECOND: '100',
    API_CONCURRENT_REQUESTS: argument('--concurrent', '10'),
  });
  try {
    await infra.startWorkers();
    const [httpLine] = await infra.startGateway();
    const otlp = /http:\/\/\S+/.exec(httpLine!)![0];
    const api = (await infra.startApi()).replace('localhost', '127.0.0.1');
    progress('seeding project A and project B');
    const a = await seedVolume(infra, Number(argument('--a-spans', '1000000')));
    const b = await seedVolume(infra, Number(argument('--b-spans', '200000')));
    // The seeded months sealed into the span metrics rollup first (the worker's sealer would spend the
    // next minutes on it, in statements of hundreds of ms): the bench measures a settled server.
    await sealSeededMinutes(infra, a);
    await sealSeededMinutes(infra, b);
    await infra.tenancy.setIngestLimits({ projectId: a.projectId, spansPerSecond: A_SPANS_PER_SECOND });
    const exports = buildCorpus({ traces: 400, spansPerRequest: 100 }).requests.map((r) => Buffer.from(r));
    const apiClient = new Pool(api, { connections: 64 });
    const otlpClient = new Pool(otlp.replace('/v1/traces', '').replace('localhost', '127.0.0.1'), { connections: 16 });

    const query = async (key: string, document: string) => {
      const started = performance.now();
      const response = await apiClient.request({
        path: '/graphql',
        method: 'POST',
        headers: { 'content-type': 'application/json', authorization: `Bearer ${key}` },
        body: JSON.stringify({ query: document }),
      });
      const text = await response.body.text();
      return { ms: performance.now() - started, limited: text.includes('"RATE_LIMITED"'), failed: text.includes('"errors"') };
    };
    const exportOnce = async (key: string, body: Buffer) => {
      const response = await otlpClient.request({
        path: '/v1/traces',
        method: 'POST',
        headers: { 'content-type': 'application/x-protobuf', authorization: `Bearer ${key}` },
        body,
      });
      await response.body.dump();
      return response.statusCode;
    };
    const dashboardRound = async () => {
      const times: number[] = [];
      for (const document of DASHBOARD) {
        const answer = await query(b.apiKey, document);
        if (answer.failed) throw new Error(`B's dashboard query failed: ${document}`);
        times.push(answer.ms);
      }
      return times;
    };

    // B's dashboard on the idle server, before the flood and again after it once the worker has
    // drained and merges are done (warm caches): the baseline is the lower of the two p50s.
    const idleDashboard = async () => {
      await quiet(infra.clickhouse);
      for (let i = 0; i < 5; i++) await dashboardRound();
      const times: number[] = [];
      anatomyPhase = 'idle';
      loopDelay.idle.enable();
      for (let i = 0; i < 20; i++) times.push(...(await dashboardRound()));
      loopDelay.idle.disable();
      anatomyPhase = undefined;
      return times;
    };
    // Where B's query time goes, idle and under the flood: its statements' waits for a turn, their
    // time at the engine, and the rest (HTTP, GraphQL, the event loop it shares with everything
    // else in the all-in-one); and the event loop's delay meanwhile.
    let anatomyPhase: 'idle' | 'flood' | undefined;
    const anatomy = { idle: { waits: 0, runs: 0, statements: 0 }, flood: { waits: 0, runs: 0, statements: 0 } };
    const loopDelay = {
      idle: monitorEventLoopDelay({ resolution: 5 }),
      flood: monitorEventLoopDelay({ resolution: 5 }),
    };
    infra.querySlots.observeWaits((participant, ms) => {
      if (anatomyPhase && participant === b.projectId) anatomy[anatomyPhase].waits += ms;
    });
    infra.querySlots.observeRuns((participant, ms) => {
      if (!anatomyPhase || participant !== b.projectId) return;
      anatomy[anatomyPhase].runs += ms;
      anatomy[anatomyPhase].statements++;
    });
    // The worker's last statement start, watched from here on: the server is settled once the
    // worker has started none for a while (the seeded months' hours, which the worker's sealer
    // merges again after the bench's seal, took ~4 s of the flood's engine time otherwise).
    let lastWorkerStart = performance.now();
    infra.querySlots.observeWaits((participant) => {
      if (participant === WORKER_PARTICIPANT) lastWorkerStart = performance.now();
    });
    const workerSettled = async () => {
      const started = performance.now();
      const by = started + 180_000;
      while (performance.now() < by && (infra.querySlots.queued > 0 || performance.now() - lastWorkerStart < 3_000)) await sleep(250);
      if (performance.now() >= by) progress('the worker was still busy after 180 s: the idle figures are not a settled server');
      return performance.now() - started;
    };
    progress('the worker settles what the seed left; B on the idle server');
    const settledBeforeMs = await workerSettled();
    const idleBefore = await idleDashboard();

    progress(
      `the flood: A at 10x its ${A_SPANS_PER_SECOND} spans/s and 16 heavy query loops, B exporting and on its dashboard, for ${seconds} s`,
    );
    const until = Date.now() + seconds * 1000;
    const statuses = { a: new Map<number, number>(), b: new Map<number, number>() };
    const count = (map: Map<number, number>, status: number) => map.set(status, (map.get(status) ?? 0) + 1);
    const aAnswers: number[] = [];
    let aLimited = 0;
    const aIngest = async (lane: number) => {
      // 100 spans an export; 4 lanes of 50 exports/s ≈ 20,000 spans/s offered.
      for (let i = lane; Date.now() < until; i += 4) {
        count(statuses.a, await exportOnce(a.apiKey, exports[i % exports.length]!));
        await sleep(20);
      }
    };
    const aQueries = async () => {
      while (Date.now() < until) {
        const answer = await query(a.apiKey, HEAVY);
        if (answer.limited) {
          aLimited++;
          await sleep(50);
        } else if (answer.failed) throw new Error("A's heavy query failed (not RATE_LIMITED): the bench would measure refusals, not load");
        else aAnswers.push(answer.ms);
      }
    };
    const bIngest = async () => {
      // 100 spans every 200 ms: 500 spans/s, a quarter of A's limit.
      for (let i = 0; Date.now() < until; i++) {
        count(statuses.b, await exportOnce(b.apiKey, exports[i % exports.length]!));
        await sleep(200);
      }
    };
    const flooded: number[] = [];
    // Each of B's statements' wait for its turn at ClickHouse, and how many statements a dashboard round is.
    const bWaits: number[] = [];
    let measuringWaits = false;
    // Every statement's start under the flood (who, when, after how long a wait): which statements
    // started while one of B's waited, i.e. went before it.
    const starts: Array<{ participant: string; at: number; waited: number }> = [];
    infra.querySlots.observeWaits((participant, ms) => {
      if (!measuringWaits) return;
      starts.push({ participant, at: performance.now(), waited: ms });
      if (participant === b.projectId) bWaits.push(ms);
    });
    // Each statement's time at the engine under the flood, by whose it is.
    const runs = new Map<string, number[]>();
    // The worker's statements by name: which of its statements hold the engine, and for how long.
    const workerStatements = new Map<string, number[]>();
    infra.querySlots.observeRuns((participant, ms, statement) => {
      if (!measuringWaits) return;
      if (participant === WORKER_PARTICIPANT) {
        let times = workerStatements.get(statement || '(unnamed)');
        if (!times) workerStatements.set(statement || '(unnamed)', (times = []));
        times.push(ms);
      }
      const who =
        participant === a.projectId ? 'a' : participant === b.projectId ? 'b' : participant === WORKER_PARTICIPANT ? 'worker' : 'other';
      let list = runs.get(who);
      if (!list) runs.set(who, (list = []));
      list.push(ms);
    });
    const bDashboard = async () => {
      await sleep(2_000); // let the flood reach its steady state
      measuringWaits = true;
      anatomyPhase = 'flood';
      loopDelay.flood.enable();
      while (Date.now() < until) flooded.push(...(await dashboardRound()));
      loopDelay.flood.disable();
      anatomyPhase = undefined;
      measuringWaits = false;
    };
    // --no-flood-ingest / --no-flood-queries leave one half of A's load out, to see which one costs B what.
    // Whether the worker kept up: span rows it inserted during the flood against the spans answered 200.
    const rowsInserted = async () => {
      const metric = await infra.metrics.getSingleMetric('spanforge_worker_batch_rows')?.get();
      return (
        metric?.values.find((value) => (value as { metricName?: string }).metricName === 'spanforge_worker_batch_rows_sum')?.value ?? 0
      );
    };
    const rowsBefore = await rowsInserted();
    let rowsDuringFlood = 0;
    setTimeout(
      () =>
        void rowsInserted().then(
          (rows) => (rowsDuringFlood = rows - rowsBefore),
          (error: unknown) => progress(`the rows inserted during the flood could not be read: ${String(error)}`),
        ),
      until - Date.now(),
    );
    const floodIngest = !process.argv.includes('--no-flood-ingest');
    const floodQueries = !process.argv.includes('--no-flood-queries');
    await Promise.all([
      ...(floodIngest ? [0, 1, 2, 3].map(aIngest) : []),
      ...(floodQueries ? Array.from({ length: 16 }, aQueries) : []),
      bIngest(),
      bDashboard(),
    ]);

    progress('the worker drains what the flood left; B on the idle server again');
    const drainedAfterMs = await workerSettled();
    const idleAfter = await idleDashboard();
    const idle = median(idleAfter) < median(idleBefore) ? idleAfter : idleBefore;

    // For each of B's statements, the statements of others that started while it waited: with fair
    // turns none does (it waits for the statement in progress only, whoever's it is).
    const bStarts = starts.filter((start) => start.participant === b.projectId);
    const overtaken = bStarts.map(
      (mine) =>
        starts.filter((other) => other.participant !== b.projectId && other.at > mine.at - mine.waited && other.at < mine.at).length,
    );
    const runMs = (who: string) => {
      const list = runs.get(who) ?? [];
      return { p50: round(median(list)), p95: round(percentile(list, 0.95)), max: round(Math.max(...list)), statements: list.length };
    };

    progress("A's statement alone: its heaviest kind, one trace's span read, on the idle server");
    const aStatementMs = await measureSpanReads(infra, a);

    progress('fragment bombs');
    const levels = 40;
    const bomb = `{ ...F0 } ${Array.from({ length: levels }, (_, i) => `fragment F${i} on Query { ...F${i + 1} ...F${i + 1} }`).join(' ')} fragment F${levels} on Query { __typename }`;
    const refusal = async (key: string | undefined) => {
      const times: number[] = [];
      for (let i = 0; i < 21; i++) {
        const started = performance.now();
        const response = await apiClient.request({
          path: '/graphql',
          method: 'POST',
          headers: { 'content-type': 'application/json', ...(key ? { authorization: `Bearer ${key}` } : {}) },
          body: JSON.stringify({ query: bomb }),
        });
        await response.body.text();
        times.push(performance.now() - started);
      }
      return median(times);
    };
    const bombAnonymousMs = await refusal(undefined);
    const bombKeyedMs = await refusal(b.apiKey);
    await apiClient.close();
    await otlpClient.close();

    const bSent = [...statuses.b.values()].reduce((s, n) => s + n, 0);
    const results = {
      fairness: {
        seconds,
        aIngestLimitSpansPerSec: A_SPANS_PER_SECOND,
        aExportStatuses: Object.fromEntries(statuses.a),
        bExportStatuses: Object.fromEntries(statuses.b),
        bExportSuccessRate: Number(((statuses.b.get(200) ?? 0) / Math.max(1, bSent)).toFixed(4)),
        bQueryP50IdleMs: round(median(idle)),
        bQueryP50IdleBeforeMs: round(median(idleBefore)),
        bQueryP50IdleAfterMs: round(median(idleAfter)),
        bQueryP50FloodMs: round(median(flooded)),
        bQueryP50Ratio: round(median(flooded) / median(idle)),
        bQueriesUnderFlood: flooded.length,
        aRequestP50Ms: round(median(aAnswers)),
        aStatementP50Ms: round(aStatementMs),
        bAddedWaitP50Ms: round(median(flooded) - median(idle)),
        bStatementWaitMs: {
          p50: round(median(bWaits)),
          p95: round(percentile(bWaits, 0.95)),
          max: round(Math.max(...bWaits)),
          statements: bWaits.length,
        },
        bStatementsPerQuery: round(bWaits.length / Math.max(1, flooded.length)),
        bQueryAnatomyMs: Object.fromEntries(
          (['idle', 'flood'] as const).map((phase) => {
            const queries = phase === 'idle' ? idleBefore.length + idleAfter.length : flooded.length;
            const total = (phase === 'idle' ? [...idleBefore, ...idleAfter] : flooded).reduce((sum, ms) => sum + ms, 0);
            const { waits, runs: atEngine } = anatomy[phase];
            const mean = (ms: number) => round(ms / Math.max(1, queries));
            return [phase, { query: mean(total), waits: mean(waits), atEngine: mean(atEngine), rest: mean(total - waits - atEngine) }];
          }),
        ),
        eventLoopDelayMs: Object.fromEntries(
          (['idle', 'flood'] as const).map((phase) => {
            const h = loopDelay[phase];
            return [phase, { p50: round(h.percentile(50) / 1e6), p99: round(h.percentile(99) / 1e6), max: round(h.max / 1e6) }];
          }),
        ),
        bStatementsOvertaken: {
          share: round(overtaken.filter((n) => n > 0).length / Math.max(1, overtaken.length)),
          p95: percentile(overtaken, 0.95),
          max: Math.max(0, ...overtaken),
        },
        statementMsUnderFlood: { a: runMs('a'), worker: runMs('worker'), b: runMs('b') },
        workerStatementsUnderFlood: Object.fromEntries(
          [...workerStatements]
            .map(([name, times]) => {
              const total = times.reduce((sum, ms) => sum + ms, 0);
              return [
                name,
                { count: times.length, totalMs: round(total), p50: round(median(times)), max: round(Math.max(...times)) },
              ] as const;
            })
            .sort(([, x], [, y]) => y.totalMs - x.totalMs),
        ),
        spansAcceptedDuringFlood: 100 * ((statuses.a.get(200) ?? 0) + (statuses.b.get(200) ?? 0)),
        spansInsertedDuringFlood: rowsDuringFlood,
        workerSettledBeforeMs: round(settledBeforeMs),
        workerDrainedAfterFloodMs: round(drainedAfterMs),
        aQueriesAnswered: aAnswers.length,
        aQueriesRateLimited: aLimited,
        fragmentBombRefusalMs: { anonymous: round(bombAnonymousMs), withKey: round(bombKeyedMs), levels },
        dataset: { aSpans: a.spans, bSpans: b.spans },
      },
    };
    progress(
      `B exports ${(results.fairness.bExportSuccessRate * 100).toFixed(1)} % answered 200; B's p50 ${results.fairness.bQueryP50IdleMs} ms idle, ${results.fairness.bQueryP50FloodMs} ms under the flood (${results.fairness.bQueryP50Ratio}x); B's added wait ${results.fairness.bAddedWaitP50Ms} ms a query (${results.fairness.bStatementsPerQuery} statements), each statement's wait p50 ${results.fairness.bStatementWaitMs.p50} ms, p95 ${results.fairness.bStatementWaitMs.p95} ms, against A's statement p50 ${results.fairness.aStatementP50Ms} ms; A's heavy request p50 ${results.fairness.aRequestP50Ms} ms`,
    );
    const { a: aRuns, worker: workerRuns } = results.fairness.statementMsUnderFlood;
    const { bStatementsOvertaken: overtakes } = results.fairness;
    progress(
      `B's idle p50 ${results.fairness.bQueryP50IdleBeforeMs} ms before the flood, ${results.fairness.bQueryP50IdleAfterMs} ms after; ${(overtakes.share * 100).toFixed(1)} % of B's statements had another's start while they waited (p95 ${overtakes.p95}, max ${overtakes.max}); under the flood A's statements took p50 ${aRuns.p50} ms (p95 ${aRuns.p95}), the worker's p50 ${workerRuns.p50} ms (p95 ${workerRuns.p95}, max ${workerRuns.max})`,
    );
    writeResults(results);
  } finally {
    await infra.shutdown.run();
    rmSync(dataDir, { recursive: true, force: true });
  }
}

/** p50 of reading one trace's spans (what A's analysed pages are made of), 40 traces, each read twice. */
async function measureSpanReads(infra: BenchStack, project: { tenantId: string; projectId: string }): Promise<number> {
  const result = await infra.clickhouse.query({
    query:
      'SELECT trace_id FROM trace_figures FINAL WHERE tenant_id = {t:String} AND project_id = {p:String} ORDER BY start_time DESC LIMIT 40',
    query_params: { t: project.tenantId, p: project.projectId },
    format: 'JSONEachRow',
  });
  const traces = new TraceRepository(new ScopedClickHouse(infra.clickhouse, project));
  const times: number[] = [];
  for (const { trace_id: traceId } of await result.json<{ trace_id: string }>()) {
    for (let i = 0; i < 2; i++) {
      const started = performance.now();
      await traces.spans(traceId, undefined, undefined, false);
      times.push(performance.now() - started);
    }
  }
  return median(times);
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const round = (n: number) => Number(n.toFixed(2));

function median(values: number[]): number {
  if (values.length === 0) return Number.NaN;
  const sorted = [...values].sort((x, y) => x - y);
  return sorted[Math.floor(sorted.length / 2)]!;
}

main().then(
  () => process.exit(0),
  (error: Error) => {
    process.stderr.write(`bench:fairness failed: ${error.stack ?? error.message}\n`);
    process.exit(1);
  },
);
