import 'reflect-metadata';
import { Pool } from 'undici';
import { refreshStoredTraceFiguresSql, storedTracesParams } from '@spanforge/clickhouse';
import {
  AnalyticsRepository,
  MetricsRepository,
  ScopedClickHouse,
  StatsRepository,
  TraceRepository,
  type MetricsQuery,
} from '@spanforge/query';
import { quiet, startBenchStack, seededDatasetArguments, type BenchStack } from './bench-stack';
import { argument, percentile, progress, writeResults } from './report';
import { sealSeededMinutes, seededOnce, type SeedResult } from './seed-volume';

const RUNS = 30;
/**
 * Warm-up pairs of each case before measuring, as in a server that has been up a while: up to WARMUP pairs, stopping after
 * WARMUP_SECONDS (at least WARMUP_FLOOR pairs). V8 compiles code that runs once a request (Node's HTTP glue, Fastify's
 * routing, Mercurius's hooks, our key check) with Maglev only after ~500–600 requests (`node --trace-opt`); measured after 20,
 * the GraphQL form carried ~0.3 ms of not-yet-optimised JavaScript that a running server does not (BENCHMARKS.md, session 5).
 */
const WARMUP = Number(argument('--warmup', '1000'));
const WARMUP_SECONDS = Number(argument('--warmup-seconds', '10'));
const WARMUP_FLOOR = 20;

interface Timing {
  p50Ms: number;
  p99Ms: number;
}

function summarise(samples: number[]): Timing {
  return { p50Ms: Number(percentile(samples, 0.5).toFixed(2)), p99Ms: Number(percentile(samples, 0.99).toFixed(2)) };
}

/**
 * A POST (with a body) or GET on one kept-alive connection with undici's Pool: the lightest client
 * at hand, so the GraphQL figure carries the server's HTTP and GraphQL work and little of the
 * client's. `node:http`'s Agent added ~0.15 ms a request, `fetch` ~0.3–0.5 ms (WHATWG streams),
 * both in this same process (BENCHMARKS.md, session 5).
 */
let pool: Pool | undefined;
async function send(url: string, apiKey: string, body?: string): Promise<string> {
  const { origin, pathname, search } = new URL(url);
  pool ??= new Pool(origin, { connections: 1 });
  const headers: Record<string, string> = { authorization: `Bearer ${apiKey}` };
  if (body !== undefined) headers['content-type'] = 'application/json';
  const response = await pool.request({ path: pathname + search, method: body === undefined ? 'GET' : 'POST', headers, body });
  const text = await response.body.text();
  if (response.statusCode !== 200) throw new Error(`HTTP ${response.statusCode}: ${text.slice(0, 200)}`);
  return text;
}

/**
 * Both forms of a query, interleaved (SQL then GraphQL, then GraphQL then SQL, …) so that drift in
 * the machine's load lands on both sides of the ratio alike.
 */
async function timePair(
  sqlRun: (i: number) => Promise<unknown>,
  gqlRun: (i: number) => Promise<unknown>,
): Promise<{ sql: Timing; gql: Timing; warmUpPairs: number }> {
  const warmUntil = performance.now() + WARMUP_SECONDS * 1000;
  let warmUpPairs = 0;
  while (warmUpPairs < WARMUP && (warmUpPairs < WARMUP_FLOOR || performance.now() < warmUntil)) {
    await sqlRun(warmUpPairs);
    await gqlRun(warmUpPairs);
    warmUpPairs++;
  }
  const sql: number[] = [];
  const gql: number[] = [];
  const measure = async (run: (i: number) => Promise<unknown>, i: number, into: number[]) => {
    const started = performance.now();
    await run(i);
    into.push(performance.now() - started);
  };
  for (let i = 0; i < RUNS; i++) {
    if (i % 2 === 0) {
      await measure(sqlRun, i, sql);
      await measure(gqlRun, i, gql);
    } else {
      await measure(gqlRun, i, gql);
      await measure(sqlRun, i, sql);
    }
  }
  return { sql: summarise(sql), gql: summarise(gql), warmUpPairs };
}

/**
 * The targets on 10M spans (BENCHMARKS.md): p50 bounds per case, and GraphQL ≤ 1.2× the same SQL
 * for the aggregates (not for the 10,000-span trace and its picture, whose "SQL" is only the span read).
 */
const TARGETS: Record<string, { p50Ms?: number; ratio?: number }> = {
  trace: { p50Ms: 20, ratio: 1.2 },
  trace10kSpans: { p50Ms: 1_000 },
  latencyByIterations: { p50Ms: 150, ratio: 1.2 },
  sessionsFirstPage: { p50Ms: 150, ratio: 1.2 },
  costBreakdownModelDay: { p50Ms: 150, ratio: 1.2 },
  costBreakdownPartDays: { p50Ms: 150, ratio: 1.2 },
  spanTypeStats: { p50Ms: 150, ratio: 1.2 },
  modelStats: { p50Ms: 150, ratio: 1.2 },
  metricsSpansModelHourly: { p50Ms: 150, ratio: 1.2 },
  metricsTracesDaily: { p50Ms: 150, ratio: 1.2 },
  metricsFeedbackDaily: { p50Ms: 150, ratio: 1.2 },
};

/** A line per measured case that has a target: met or missed, with the figures. */
function targetChecks(query: Record<string, Timing & { ratio: number }>): string[] {
  return Object.entries(query).flatMap(([name, measured]) => {
    const target = TARGETS[name];
    if (!target) return [];
    const checks = [
      target.p50Ms === undefined
        ? undefined
        : { met: measured.p50Ms <= target.p50Ms, text: (sign: string) => `p50 ${measured.p50Ms} ms ${sign} ${target.p50Ms} ms` },
      target.ratio === undefined
        ? undefined
        : { met: measured.ratio <= target.ratio, text: (sign: string) => `GraphQL ÷ SQL ${measured.ratio} ${sign} ${target.ratio}` },
    ].filter((check) => check !== undefined);
    const met = checks.every((check) => check.met);
    return [`target ${met ? 'met   ' : 'MISSED'} ${name}: ${checks.map((check) => check.text(check.met ? '≤' : '>')).join(', ')}`];
  });
}

/** One trace of 10,000 spans (a root and 9,999 sequential tool calls, each with ~1.5 KB of arguments), for the large-trace target. */
async function seedLargeTrace(infra: BenchStack, seed: SeedResult): Promise<string> {
  const traceId = 'f'.repeat(16) + '0'.repeat(15) + '1';
  const scope = { tenantId: seed.tenantId, projectId: seed.projectId };
  await infra.clickhouse.command({
    query: `INSERT INTO spans (tenant_id, project_id, trace_id, span_id, parent_span_id, name, kind, service_name, start_time, end_time, duration_ns, status_code, span_type, tool_name, attributes, input)
      SELECT {tenantId:String}, {projectId:String}, {traceId:String}, lower(hex(toUInt64(number + 1))), if(number = 0, '', lower(hex(toUInt64(1)))),
        if(number = 0, 'batch.run', concat('execute_tool step-', toString(number))), 'INTERNAL', 'bench-agent',
        fromUnixTimestamp64Milli(toInt64({base:Int64} + if(number = 0, 0, number)), 'UTC'),
        fromUnixTimestamp64Milli(toInt64({base:Int64} + if(number = 0, 20000, number + 1)), 'UTC'),
        toUInt64(if(number = 0, 20000, 1) * 1000000), 'UNSET', if(number = 0, 'RUN', 'TOOL'), if(number = 0, '', 'tool'), map('step', toString(number)),
        if(number = 0, '', concat('{"query":"step ', toString(number), '","context":"', repeat('x', 1500), '"}'))
      FROM numbers(10000)`,
    query_params: { ...scope, traceId, base: Date.parse(seed.from) + 3_600_000 },
  });
  await infra.clickhouse.command({
    query: refreshStoredTraceFiguresSql(1),
    query_params: { ...scope, ...storedTracesParams([[traceId]]) },
  });
  return traceId;
}

/**
 * DURATION_P50/P95/P99 from `metrics` against the exact percentiles of the same rows as the query
 * defines them (the value at rank ⌊p·(n−1)⌋): SPANS by model and hour against spans FINAL, and
 * TRACES by day against trace_figures FINAL. The largest relative error, and how many figures.
 */
async function measurePercentileError(
  infra: BenchStack,
  scope: { tenantId: string; projectId: string },
  metrics: MetricsRepository,
  range: { from: string; to: string },
): Promise<{ max: number; compared: number; traces: { max: number; compared: number } }> {
  const levels = ['DURATION_P50_MS', 'DURATION_P95_MS', 'DURATION_P99_MS'] as const;
  const exactOf = async (sql: string) => {
    const result = await infra.clickhouse.query({ query: sql, query_params: { ...scope, ...range }, format: 'JSONEachRow' });
    return new Map(
      (await result.json<{ key: string; bucket: string; q: number[] }>()).map((row) => [`${row.key}|${Number(row.bucket)}`, row.q]),
    );
  };
  const compare = (answer: Awaited<ReturnType<MetricsRepository['metrics']>>, exact: Map<string, number[]>) => {
    let max = 0;
    let compared = 0;
    for (const series of answer.series) {
      for (const point of series.points) {
        const want = exact.get(`${series.keys[0] ?? ''}|${point.time}`);
        if (!want) continue;
        point.values.forEach((got, i) => {
          if (got === null || want[i] === 0) return;
          max = Math.max(max, Math.abs(got - want[i]!) / want[i]!);
          compared++;
        });
      }
    }
    return { max, compared };
  };
  const ranked = `arrayMap(p -> sorted[toUInt64(floor(p * (length(sorted) - 1))) + 1], [0.5, 0.95, 0.99]) AS q`;
  const spans = compare(
    await metrics.metrics({ view: 'SPANS', measures: [...levels], groupBy: ['MODEL'], granularity: 'HOUR', ...range }),
    await exactOf(`SELECT toString(model) AS key, toUnixTimestamp(toStartOfHour(start_time)) * 1000 AS bucket,
                     arraySort(groupArray(duration_ns / 1e6)) AS sorted, ${ranked}
                   FROM spans FINAL WHERE tenant_id = {tenantId:String} AND project_id = {projectId:String}
                     AND start_time >= parseDateTime64BestEffort({from:String}) AND start_time < parseDateTime64BestEffort({to:String})
                   GROUP BY key, bucket`),
  );
  const traces = compare(
    await metrics.metrics({ view: 'TRACES', measures: [...levels], granularity: 'DAY', ...range }),
    await exactOf(`SELECT '' AS key, toUnixTimestamp(toStartOfDay(start_time)) * 1000 AS bucket, arraySort(groupArray(duration_ms)) AS sorted, ${ranked}
                   FROM trace_figures FINAL WHERE tenant_id = {tenantId:String} AND project_id = {projectId:String}
                     AND start_time >= parseDateTime64BestEffort({from:String}) AND start_time < parseDateTime64BestEffort({to:String})
                   GROUP BY bucket`),
  );
  return { ...spans, traces };
}

/**
 * `npm run bench:query [-- --spans N] [--data-dir DIR] [--only case,case] [--warmup N] [--warmup-seconds S]`: each aggregate RUNS times through GraphQL
 * and the same SQL straight through the query layer, on a seeded dataset (seeded once per data
 * directory and size; see seed-volume.ts). Reports p50/p99 of both and their ratio.
 */
async function main(): Promise<void> {
  const { spans, dataDir } = seededDatasetArguments();
  const infra = await startBenchStack(dataDir);
  try {
    const seed = await seededOnce(infra, dataDir, spans);
    const largeTraceId = await seedLargeTrace(infra, seed);
    const api = await infra.startApi();
    const scope = { tenantId: seed.tenantId, projectId: seed.projectId };
    const db = new ScopedClickHouse(infra.clickhouse, scope);
    const traces = new TraceRepository(db);
    const analytics = new AnalyticsRepository(db);
    const stats = new StatsRepository(db);
    const traceIds = (
      await db.rows<{ trace_id: string }>(
        'bench.trace_ids',
        'SELECT trace_id FROM trace_index WHERE tenant_id = {tenantId:String} AND project_id = {projectId:String} ORDER BY cityHash64(trace_id) LIMIT 33',
      )
    ).map((r) => r.trace_id);
    const graphql = async (query: string, variables: Record<string, unknown> = {}) => {
      const body = JSON.parse(await send(`${api}/graphql`, seed.apiKey, JSON.stringify({ query, variables }))) as { errors?: unknown[] };
      if (body.errors) throw new Error(`GraphQL error: ${JSON.stringify(body.errors)}`);
    };
    const range = { from: seed.from, to: seed.to };
    const partDays = {
      from: new Date(Date.parse(seed.from) + 5.5 * 3_600_000).toISOString(),
      to: new Date(Date.parse(seed.to) - 3.25 * 3_600_000).toISOString(),
    };
    await sealSeededMinutes(infra, scope);
    const metricsRepository = new MetricsRepository(db);
    const metricsCase = (query: MetricsQuery) => ({
      gql: () =>
        graphql('query($q: MetricsQuery!) { metrics(query: $q) { granularity series { keys points { time values } } } }', {
          q: query,
        }),
      sql: () => metricsRepository.metrics(query),
    });
    // Feedback is stamped when it is received (the seed's, when it was seeded): the last 30 days up to now.
    const feedbackRange = {
      from: new Date(Date.now() - 30 * 86_400_000).toISOString(),
      to: new Date(Date.now() + 3_600_000).toISOString(),
    };
    const cases: Record<string, { gql: (i: number) => Promise<unknown>; sql: (i: number) => Promise<unknown> }> = {
      metricsSpansModelHourly: metricsCase({
        view: 'SPANS',
        measures: ['COUNT', 'COST_USD', 'DURATION_P95_MS'],
        groupBy: ['MODEL'],
        granularity: 'HOUR',
        ...range,
      }),
      metricsTracesDaily: metricsCase({
        view: 'TRACES',
        measures: ['COUNT', 'ERROR_RATE', 'DURATION_P99_MS'],
        granularity: 'DAY',
        ...range,
      }),
      metricsFeedbackDaily: metricsCase({
        view: 'FEEDBACK',
        measures: ['SCORE_AVG'],
        groupBy: ['SCORE_NAME'],
        granularity: 'DAY',
        ...feedbackRange,
      }),
      trace: {
        gql: (i) =>
          graphql(
            'query($id: String!) { trace(traceId: $id) { traceId durationMs iterations costUsd inputTokens outputTokens errorCount spans { spanId parentSpanId name type startTime endTime durationMs statusCode model costUsd } } }',
            { id: traceIds[i % traceIds.length] },
          ),
        sql: async (i) => {
          const id = traceIds[i % traceIds.length]!;
          await Promise.all([traces.latestFigures(id), traces.spans(id, undefined, undefined, false)]);
        },
      },
      trace10kSpans: {
        gql: () =>
          graphql(
            'query($id: String!) { trace(traceId: $id) { traceId durationMs spans { spanId parentSpanId name type durationMs statusCode } criticalPath { spanId } } }',
            { id: largeTraceId },
          ),
        sql: () => traces.spans(largeTraceId, undefined, undefined, false),
      },
      waterfall10kSpans: {
        gql: () => send(`${api}/v1/traces/${largeTraceId}/waterfall.svg`, seed.apiKey),
        sql: () => traces.spans(largeTraceId, undefined, undefined, false),
      },
      tracesFirstPage: {
        gql: () =>
          graphql(
            'query($f: TraceFilter) { traces(filter: $f, first: 20) { nodes { traceId durationMs costUsd iterations } totalCount } }',
            { f: range },
          ),
        sql: () => traces.page(range, 20, undefined),
      },
      // The traces page as it first opens: no range, no total; the newest traces of the project.
      tracesNewest: {
        gql: () => graphql('{ traces(first: 20) { nodes { traceId durationMs costUsd iterations } } }'),
        sql: () => traces.page(undefined, 20, undefined, false),
      },
      latencyByIterations: {
        gql: () =>
          graphql('query($f: TraceFilter) { latencyByIterations(filter: $f) { iterations traceCount p50Ms p95Ms p99Ms avgCostUsd } }', {
            f: range,
          }),
        sql: () => analytics.latencyByIterations(range),
      },
      sessionsFirstPage: {
        gql: () =>
          graphql(
            'query($f: SessionFilter) { sessions(filter: $f, first: 20) { nodes { sessionId traceCount costUsd inputTokens outputTokens } totalCount } }',
            { f: range },
          ),
        sql: () => analytics.sessions(range, 20, undefined),
      },
      spanTypeStats: {
        gql: () =>
          graphql('query($f: TraceFilter) { spanTypeStats(filter: $f) { type spanCount errorRate p50Ms p95Ms p99Ms } }', { f: range }),
        sql: () => stats.spanTypeStats(range),
      },
      modelStats: {
        gql: () =>
          graphql(
            'query($f: TraceFilter) { modelStats(filter: $f) { model calls inputTokens outputTokens costUsd ttftP50Ms ttftP95Ms outputTokensPerSecond } }',
            { f: range },
          ),
        sql: () => stats.modelStats(range),
      },
      costBreakdownModelDay: {
        gql: () =>
          graphql(
            'query($f: TraceFilter) { costBreakdown(groupBy: [MODEL, DAY], filter: $f) { keys costUsd inputTokens outputTokens spanCount } }',
            { f: range },
          ),
        sql: () => analytics.costBreakdown(['MODEL', 'DAY'], range),
      },
      // The same over a range that does not start or end at midnight (a dashboard's "last 30 days" from now).
      costBreakdownPartDays: {
        gql: () =>
          graphql(
            'query($f: TraceFilter) { costBreakdown(groupBy: [MODEL, DAY], filter: $f) { keys costUsd inputTokens outputTokens spanCount } }',
            { f: partDays },
          ),
        sql: () => analytics.costBreakdown(['MODEL', 'DAY'], partDays),
      },
    };
    const query: Record<string, Timing & { sqlP50Ms: number; sqlP99Ms: number; ratio: number }> = {};
    const only = argument('--only', '').split(',').filter(Boolean);
    const unknown = only.filter((name) => !(name in cases));
    if (unknown.length > 0) throw new Error(`--only: no case ${unknown.join(', ')} (cases: ${Object.keys(cases).join(', ')})`);
    for (const [name, run] of Object.entries(cases)) {
      if (only.length > 0 && !only.includes(name)) continue;
      // Each case on a quiet engine: merges (of the large trace just written, or of parts the last case
      // left) take CPU from the request path, and more from GraphQL's JavaScript than from the SQL's wait.
      await quiet(infra.clickhouse);
      const { sql, gql, warmUpPairs } = await timePair(run.sql, run.gql);
      query[name] = { ...gql, sqlP50Ms: sql.p50Ms, sqlP99Ms: sql.p99Ms, ratio: Number((gql.p50Ms / sql.p50Ms).toFixed(2)) };
      progress(
        `${name}: GraphQL p50 ${gql.p50Ms} ms p99 ${gql.p99Ms} ms; SQL p50 ${sql.p50Ms} ms p99 ${sql.p99Ms} ms (after ${warmUpPairs} warm-up pairs)`,
      );
    }
    for (const line of targetChecks(query)) progress(line);
    const percentileError = await measurePercentileError(infra, scope, metricsRepository, range);
    progress(
      `metrics percentiles against the exact values: largest relative error ${(percentileError.max * 100).toFixed(3)} % over ${percentileError.compared} SPANS (model, hour, level) figures, ${(percentileError.traces.max * 100).toFixed(3)} % over ${percentileError.traces.compared} TRACES (day, level) figures (target ≤ 1 %)`,
    );
    if (only.length > 0) {
      // A partial run does not replace the full run's figures in bench/results/latest.json.
      process.stdout.write(`${JSON.stringify({ query }, null, 2)}\n`);
    } else {
      writeResults({ query, percentileError, dataset: { spans: seed.spans, traces: seed.traces } });
    }
  } finally {
    await pool?.close();
    await infra.shutdown.run();
  }
}

main().then(
  () => process.exit(0),
  (error: Error) => {
    process.stderr.write(`bench:query failed: ${error.stack ?? error.message}\n`);
    process.exit(1);
  },
);
