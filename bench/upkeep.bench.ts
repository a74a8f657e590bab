import 'reflect-metadata';
import { execFileSync } from 'node:child_process';
import { createHash, randomUUID } from 'node:crypto';
import { rmSync } from 'node:fs';
import path from 'node:path';
import {
  FairScheduler,
  REFRESH_ALL_SESSION_FIGURES_SQL,
  WORKER_PARTICIPANT,
  createClickHouseClient,
  engineSettings,
  scheduledClient,
  type ClickHouseClient,
} from '@spanforge/clickhouse';
import { DEFAULT_CONDITION_CACHE_MIB } from '@spanforge/config';
import { SpanRepository, sessionsToRefresh } from '@spanforge/ingest';
import { quiet, reportedAllocatorDecay, seededDatasetArguments, startBenchStack, temporaryDataDir } from './bench-stack';
import { argument, progress, writeResults } from './report';
import { figuresOfDay, seededOnce, type SeedResult } from './seed-volume';

const STEPS = ['storedTraces', 'traceFigures', 'sessionFigures', 'costDaily', 'traceMetrics'] as const;
type StatementName = (typeof STEPS)[number];

/**
 * The projects a round goes to: the seeded one; an empty one; and one holding only the seeded
 * project's traces of the day the rounds write into, so that what grows with the project's past
 * (seeded ÷ one day) is told apart from what grows with the day's traffic (one day ÷ empty).
 */
const PROJECTS = ['seeded', 'empty', 'oneDay'] as const;
type Project = (typeof PROJECTS)[number];

/**
 * Rounds of the seeded project that carry, besides their new traces, one span more of each of a
 * few traces that started on the seeded project's first day (reported against the seeded
 * project's rounds without): with `--late-traces N`, a copy of the trace's last span with its own
 * start (an exporter that retried after an outage: the trace keeps its time); with
 * `--long-traces N`, a copy of it that starts with the round's traces (a long agent run's newest
 * step: the trace now runs from that first day to the round's).
 */
const OLD_TRACE_ROUNDS = ['late', 'long'] as const;
type OldTraceRound = (typeof OLD_TRACE_ROUNDS)[number];

/**
 * Rounds of the seeded project reported against its rounds without: the old-trace ones, and with
 * `--continuing-traces N` a round whose K new traces include N that continue sessions the seeded
 * project already holds (sessions of the day before the rounds': a conversation's next turn), where a
 * plain round's all start sessions of their own.
 */
const EXTRA_ROUNDS = [...OLD_TRACE_ROUNDS, 'continuing'] as const;
type ExtraRound = (typeof EXTRA_ROUNDS)[number];
type Round = Project | ExtraRound;

const isExtraRound = (round: Round): round is ExtraRound => (EXTRA_ROUNDS as readonly Round[]).includes(round);

/** A fresh value per kind of round (or any keys). */
const eachOf = <K extends string, T>(keys: readonly K[], make: () => T): Record<K, T> =>
  Object.fromEntries(keys.map((key) => [key, make()])) as Record<K, T>;

interface Scope {
  tenantId: string;
  projectId: string;
}

/** The start (ms, UTC) of the seeded project's last full day: the day every round writes into. */
const lastSeededDayMs = (seed: SeedResult): number => Date.parse(seed.to) - 86_400_000;

/**
 * Stores `count` traces in `target`: copies of traces from the seeded project's first 20 hours,
 * under new trace and session ids (NEW_ID_SQL: sessions of their own), moved to the last seeded
 * day. With `windowMs`, each trace is moved to start within `windowMs` of `windowStartMs`, as the
 * traces of a round of live ingest do (they arrived together, so they started about together); without,
 * the traces keep their spacing over the 20 hours (a round of late, scattered data). With
 * `continuing`, the copies are of traces from the first 20 hours of the day before instead (no round
 * writes there), under new trace and span ids but their own sessions (the seeded project's, which
 * they then continue: a conversation's next turn, the next day). Goes through the same
 * materialized views as ingest. Returns their trace ids.
 */
async function storeRoundOfTraces(
  client: ClickHouseClient,
  seed: SeedResult,
  target: Scope,
  round: string,
  count: number,
  window: { startMs: number; windowMs: number } | undefined,
  continuing = false,
): Promise<string[]> {
  if (count === 0) return [];
  // The copies' source: the seeded project's first 20 hours, or with `continuing` the day before the rounds'.
  const fromMs = continuing ? lastSeededDayMs(seed) - 86_400_000 : Date.parse(seed.from);
  const picked = await client.query({
    query: `SELECT trace_id, toUnixTimestamp64Milli(min(start_time)) AS first_ms FROM trace_index
      WHERE tenant_id = {tenantId:String} AND project_id = {projectId:String}
      GROUP BY trace_id HAVING min(start_time) >= fromUnixTimestamp64Milli({fromMs:Int64}, 'UTC')
        AND min(start_time) < fromUnixTimestamp64Milli({fromMs:Int64}, 'UTC') + INTERVAL 20 HOUR
      ORDER BY cityHash64(trace_id, {round:String}) LIMIT {count:UInt32}`,
    query_params: { tenantId: seed.tenantId, projectId: seed.projectId, round, fromMs, count },
    format: 'JSONEachRow',
  });
  const traces = await picked.json<{ trace_id: string; first_ms: string }>();
  const lastDayShiftMs = lastSeededDayMs(seed) - fromMs;
  // Each trace's own shift (ms): to its place in the window, or to the last day.
  const shifts = traces.map((t, i) =>
    window ? window.startMs + Math.floor((i * window.windowMs) / Math.max(traces.length, 1)) - Number(t.first_ms) : lastDayShiftMs,
  );
  // A continuing copy's spans get ids of their own too: the session's rollup keeps its spans' usage by span id, and a next
  // turn adds spans to the session, where the source's ids would fall onto the source trace's.
  const ownSpanIds = continuing
    ? ` ${NEW_SPAN_ID_SQL('s.span_id')} AS span_id,
        if(s.parent_span_id = '', '', ${NEW_SPAN_ID_SQL('s.parent_span_id')}) AS parent_span_id,`
    : '';
  await client.command({
    query: `INSERT INTO spans SELECT * REPLACE ({targetTenant:String} AS tenant_id, {targetProject:String} AS project_id,
        ${NEW_ID_SQL('s.trace_id')} AS trace_id,
        ${continuing ? 's.session_id' : `if(s.session_id = '', '', ${NEW_ID_SQL('s.session_id')})`} AS session_id,${ownSpanIds}
        s.start_time + toIntervalMillisecond(transform(s.trace_id, {ids:Array(String)}, {shifts:Array(Int64)}, toInt64(0))) AS start_time,
        s.end_time + toIntervalMillisecond(transform(s.trace_id, {ids:Array(String)}, {shifts:Array(Int64)}, toInt64(0))) AS end_time)
      FROM spans AS s
      WHERE s.tenant_id = {tenantId:String} AND s.project_id = {projectId:String} AND s.trace_id IN {ids:Array(String)}`,
    query_params: {
      tenantId: seed.tenantId,
      projectId: seed.projectId,
      targetTenant: target.tenantId,
      targetProject: target.projectId,
      round,
      ids: traces.map((t) => t.trace_id),
      shifts,
    },
  });
  return traces.map((t) => newId(round, t.trace_id));
}

/**
 * Stores one more span of each of `count` traces of the seeded project that started on its first
 * day: a copy of the trace's last span under a new span id, ingested now, with its own start, or
 * moved to start at `startMs` (its duration kept). Returns their trace ids.
 */
async function storeOldTraceSpans(
  client: ClickHouseClient,
  seed: SeedResult,
  round: string,
  count: number,
  startMs: number | undefined,
): Promise<string[]> {
  const params = { tenantId: seed.tenantId, projectId: seed.projectId, round, from: seed.from, count };
  const picked = await client.query({
    query: `SELECT trace_id FROM trace_index WHERE tenant_id = {tenantId:String} AND project_id = {projectId:String}
      GROUP BY trace_id HAVING min(start_time) < parseDateTime64BestEffort({from:String}, 9, 'UTC') + INTERVAL 1 DAY
        AND max(end_time) < parseDateTime64BestEffort({from:String}, 9, 'UTC') + INTERVAL 2 DAY
      ORDER BY cityHash64(trace_id, {round:String}) LIMIT {count:UInt32}`,
    query_params: params,
    format: 'JSONEachRow',
  });
  // (Traces that end by the next day: none an earlier round made long.)
  const ids = (await picked.json<{ trace_id: string }>()).map((t) => t.trace_id);
  await client.command({
    query: `INSERT INTO spans SELECT * REPLACE (${NEW_SPAN_ID_SQL('s.span_id')} AS span_id,
        now64(3) AS ingested_at${
          startMs === undefined
            ? ''
            : `, s.start_time + toIntervalMillisecond({startMs:Int64} - toUnixTimestamp64Milli(s.start_time)) AS start_time,
        s.end_time + toIntervalMillisecond({startMs:Int64} - toUnixTimestamp64Milli(s.start_time)) AS end_time`
        })
      FROM spans AS s
      WHERE s.tenant_id = {tenantId:String} AND s.project_id = {projectId:String} AND s.trace_id IN {ids:Array(String)}
      ORDER BY s.start_time DESC LIMIT 1 BY s.trace_id`,
    query_params: { ...params, ids, startMs: startMs ?? 0 },
  });
  return ids;
}

/**
 * Copies into `target` the traces of the seeded project that start on `day` (YYYY-MM-DD, UTC), whole,
 * under their own ids, with their feedback, and computes their figures and rollups as the seeding
 * does: a project holding only the day the rounds write into, with the same traffic that day as the
 * seeded project. Returns how many traces and feedback scores it holds (every score the seeded
 * project has on those traces, or it throws).
 */
async function copyOneDay(
  client: ClickHouseClient,
  seed: SeedResult,
  target: Scope,
  day: string,
): Promise<{ traces: number; feedback: number }> {
  const params = {
    tenantId: seed.tenantId,
    projectId: seed.projectId,
    targetTenant: target.tenantId,
    targetProject: target.projectId,
    day,
  };
  // The source's rows are named by their table (s., f.): unqualified, the REPLACE aliases would shadow the columns.
  const dayTraces = `SELECT trace_id FROM trace_index WHERE tenant_id = {tenantId:String} AND project_id = {projectId:String}
      GROUP BY trace_id HAVING toDate(min(start_time)) = {day:Date}`;
  await client.command({
    query: `INSERT INTO spans SELECT * REPLACE ({targetTenant:String} AS tenant_id, {targetProject:String} AS project_id)
      FROM spans AS s WHERE s.tenant_id = {tenantId:String} AND s.project_id = {projectId:String}
        AND toDate(s.start_time) BETWEEN {day:Date} AND {day:Date} + 1 AND s.trace_id IN (${dayTraces})`,
    query_params: params,
  });
  await client.command({
    query: `INSERT INTO feedback SELECT * REPLACE ({targetTenant:String} AS tenant_id, {targetProject:String} AS project_id)
      FROM feedback AS f FINAL WHERE f.tenant_id = {tenantId:String} AND f.project_id = {projectId:String} AND f.trace_id IN (${dayTraces})`,
    query_params: params,
  });
  const scope = { tenantId: target.tenantId, projectId: target.projectId };
  await figuresOfDay(client, scope, day);
  await client.command({ query: REFRESH_ALL_SESSION_FIGURES_SQL, query_params: scope });
  const copied = await countOf(
    client,
    'SELECT uniqExact(trace_id) FROM trace_index WHERE tenant_id = {tenantId:String} AND project_id = {projectId:String}',
    scope,
  );
  if (copied === 0) throw new Error(`the seeded project has no trace starting on ${day} to copy`);
  const feedbackSql = 'SELECT count() FROM feedback FINAL WHERE tenant_id = {tenantId:String} AND project_id = {projectId:String}';
  const sourceFeedback = await countOf(client, `${feedbackSql} AND trace_id IN (${dayTraces})`, {
    tenantId: seed.tenantId,
    projectId: seed.projectId,
    day,
  });
  const copiedFeedback = await countOf(client, feedbackSql, scope);
  if (copiedFeedback !== sourceFeedback)
    throw new Error(`the day's copy holds ${copiedFeedback} feedback scores, the seeded project ${sourceFeedback} on those traces`);
  return { traces: copied, feedback: copiedFeedback };
}

/** The one number a `SELECT count()`-like statement answers. */
async function countOf(client: ClickHouseClient, query: string, params: Record<string, unknown>): Promise<number> {
  const result = await client.query({ query, query_params: params, format: 'JSONCompactEachRow' });
  const [row] = await result.json<[number | string]>();
  return Number(row?.[0] ?? 0);
}

/**
 * A copied trace's or session's new id: random-looking and 32 hex digits, as real ones are, so that
 * it sorts among the seeded ones (a prefix would sort every new id after every seeded one and let
 * each lookup by id skip the seeded parts whole, which real ids never do). newId in SQL.
 */
const NEW_ID_SQL = (column: string) => `lower(hex(MD5(concat({round:String}, ${column}))))`;

/** A copied span's new id (16 hex digits), as NEW_ID_SQL makes trace ids. */
const NEW_SPAN_ID_SQL = (column: string) => `substring(${NEW_ID_SQL(column)}, 1, 16)`;

/** NEW_ID_SQL's id of `id` copied in `round`. */
const newId = (round: string, id: string): string =>
  createHash('md5')
    .update(round + id)
    .digest('hex');

/** Runs one round's upkeep on `traceIds` of `scope` through the worker's repository, in its order; milliseconds per step. */
async function upkeepRound(repository: SpanRepository, scope: Scope, traceIds: string[]): Promise<Record<StatementName, number>> {
  const timed = async <T>(work: () => Promise<T>): Promise<[T, number]> => {
    const started = performance.now();
    const result = await work();
    return [result, performance.now() - started];
  };
  // The round's first look at its traces: what to write again, and their sessions (the copies' sessions are the stored ones).
  const [looked, storedTraces] = await timed(() => repository.storedTraces(scope, traceIds, []));
  const sessions = sessionsToRefresh([], looked.traces);
  // Bounded by the look, as the worker's round is when its look covered every trace it refreshes.
  const [{ minutes }, traceFigures] = await timed(() => repository.refreshTraceFigures(scope, traceIds, [], looked.look));
  const [, sessionFigures] = await timed(() => repository.refreshSessionFigures(scope, sessions));
  const [, costDaily] = await timed(() => repository.refreshDailyCosts(scope, minutes));
  const [, traceMetrics] = await timed(() => repository.refreshTraceMetrics(scope, minutes));
  return { storedTraces, traceFigures, sessionFigures, costDaily, traceMetrics };
}

const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!;

/** Milliseconds per statement name, summed over a round, as the statements' scheduler observed them. */
type StatementTimes = Map<string, number>;

/**
 * `npm run bench:upkeep [-- --spans N] [--data-dir DIR] [--traces K] [--rounds R] [--window-seconds W] [--condition-cache-mib C] [--late-traces L] [--long-traces L] [--continuing-traces N]`:
 * how the worker's per-round upkeep (the look at the stored traces, trace figures, session figures,
 * daily costs, trace metrics) grows with the project's size. On a copy of the seeded dataset (the
 * seed itself is left as it is),
 * R rounds of K new traces each go to the seeded project, to an empty project and to one holding
 * only the seeded project's traces of the rounds' day (PROJECTS), in turn, on a quiet engine; the
 * traces of a round start within W seconds (default 30), as a round of live ingest's do, or with
 * W = 0 over 20 hours, as late data. The report gives each statement's median per project and the
 * ratios seeded ÷ empty (1 = upkeep does not depend on the project's size) and seeded ÷ one day (1 =
 * it does not depend on the project's past). The engine's query condition cache has the
 * all-in-one's default size unless C MiB is given. With `--late-traces L`, `--long-traces L` or
 * `--continuing-traces N` (default 0), the seeded project has one more kind of round each
 * (EXTRA_ROUNDS), reported against the seeded project's rounds without.
 */
async function main(): Promise<void> {
  const { spans, dataDir } = seededDatasetArguments();
  const traces = Number(argument('--traces', '500'));
  const rounds = Number(argument('--rounds', '7'));
  // --window-seconds W: a round's traces start within W seconds (0: spread over 20 hours, as late data).
  const windowMs = Number(argument('--window-seconds', '30')) * 1000;
  const conditionCacheMiB = Number(argument('--condition-cache-mib', String(DEFAULT_CONDITION_CACHE_MIB)));
  const oldTraces: Record<OldTraceRound, number> = {
    late: Number(argument('--late-traces', '0')),
    long: Number(argument('--long-traces', '0')),
  };
  // Of a continuing round's K traces, N continue sessions of the seeded project (at most K).
  const continuingTraces = Math.min(traces, Number(argument('--continuing-traces', '0')));
  const extraTraces: Record<ExtraRound, number> = { ...oldTraces, continuing: continuingTraces };
  const extraRounds = EXTRA_ROUNDS.filter((kind) => extraTraces[kind] > 0);
  const infra = await startBenchStack(dataDir);
  let seed: SeedResult;
  try {
    seed = await seededOnce(infra, dataDir, spans);
  } finally {
    await infra.shutdown.run();
  }
  const copy = temporaryDataDir('spanforge-upkeep-');
  progress(`copying the seeded ClickHouse data to ${copy}`);
  execFileSync('cp', ['-a', path.join(dataDir, 'clickhouse'), copy]);
  const client = createClickHouseClient({ kind: 'embedded', path: path.join(copy, 'clickhouse'), conditionCacheMiB });
  // Each round's statements' times, by name: the worker's statements go through a scheduler, whose
  // one slot (the round sends one at a time) times each as the all-in-one's metrics do.
  let roundTimes: StatementTimes = new Map();
  const slots = new FairScheduler(1);
  slots.observeRuns((_participant, ranMs, statement) => roundTimes.set(statement, (roundTimes.get(statement) ?? 0) + ranMs));
  const repository = new SpanRepository(scheduledClient(client, slots, WORKER_PARTICIPANT));
  try {
    // The engine takes its arguments when it starts: the seeding's stack, closed above, must have let it stop.
    const engineMiB = (await engineSettings(client)).conditionCacheMiB;
    if (engineMiB !== conditionCacheMiB)
      throw new Error(`the engine runs with a ${engineMiB} MiB query condition cache, not ${conditionCacheMiB}`);
    const allocatorDecayMs = await reportedAllocatorDecay(client);
    const projects: Record<Project, Scope> = {
      seeded: { tenantId: seed.tenantId, projectId: seed.projectId },
      empty: { tenantId: randomUUID(), projectId: randomUUID() },
      oneDay: { tenantId: randomUUID(), projectId: randomUUID() },
    };
    const roundsDay = new Date(lastSeededDayMs(seed)).toISOString().slice(0, 10);
    const oneDay = await copyOneDay(client, seed, projects.oneDay, roundsDay);
    progress(
      `a third project holds only the seeded project's traces of ${roundsDay}: ${oneDay.traces.toLocaleString('en')} traces, ` +
        `${oneDay.feedback.toLocaleString('en')} feedback scores`,
    );
    await quiet(client);
    const kinds: Round[] = [...PROJECTS, ...extraRounds];
    const samples = eachOf(kinds, (): Array<Record<StatementName, number>> => []);
    const statementSamples = eachOf(kinds, (): StatementTimes[] => []);
    for (let round = 0; round < rounds; round++) {
      // Each kind of round in each place of the order in turn.
      const order = kinds.map((_, i) => kinds[(i + round) % kinds.length]!);
      for (const which of order) {
        const oldTraceRound = which === 'late' || which === 'long';
        const scope = projects[isExtraRound(which) ? 'seeded' : which];
        // Round r's traces start in minute r of the last seeded day's noon, in every project alike.
        const roundStartMs = lastSeededDayMs(seed) + 12 * 3_600_000 + round * 60_000;
        const window = windowMs > 0 ? { startMs: roundStartMs, windowMs } : undefined;
        // The rounds' names pick their traces (the seeded ones copied, the old ones given a span).
        const name = `u${round}${which === 'long' ? 'g' : which[0]}`;
        const continuing = which === 'continuing' ? continuingTraces : 0;
        const traceIds = [
          ...(await storeRoundOfTraces(client, seed, scope, name, traces - continuing, window)),
          ...(await storeRoundOfTraces(client, seed, scope, name, continuing, window, true)),
        ];
        // (A late round's old traces are picked by its own name, as before the long rounds were added.)
        const oldIds = oldTraceRound
          ? await storeOldTraceSpans(
              client,
              seed,
              which === 'late' ? name : `${name}l`,
              oldTraces[which],
              which === 'long' ? roundStartMs : undefined,
            )
          : [];
        await quiet(client);
        roundTimes = new Map();
        samples[which].push(await upkeepRound(repository, scope, [...traceIds, ...oldIds]));
        statementSamples[which].push(roundTimes);
      }
      const besides = [
        ...OLD_TRACE_ROUNDS.filter((kind) => oldTraces[kind] > 0).map((kind) => `, ${oldTraces[kind]} ${kind} ones besides`),
        ...(continuingTraces > 0 ? [`, and a round of which ${continuingTraces} continue sessions`] : []),
      ].join('');
      progress(`round ${round + 1} of ${rounds}: ${traces} traces to each project${besides}`);
    }
    const withExtra = eachOf(extraRounds, (): Record<string, { ms: number; seededMs: number; ratio: number }> => ({}));
    const report: Record<string, { seededMs: number; emptyMs: number; oneDayMs: number; ratio: number; ratioToOneDay: number }> = {};
    for (const name of [...STEPS, 'round'] as const) {
      const pick = (s: Record<StatementName, number>) => (name === 'round' ? Object.values(s).reduce((a, b) => a + b, 0) : s[name]);
      const [seededMs, emptyMs, oneDayMs] = PROJECTS.map((which) => median(samples[which].map(pick))) as [number, number, number];
      report[name] = {
        seededMs: Number(seededMs.toFixed(1)),
        emptyMs: Number(emptyMs.toFixed(1)),
        oneDayMs: Number(oneDayMs.toFixed(1)),
        ratio: Number((seededMs / emptyMs).toFixed(2)),
        ratioToOneDay: Number((seededMs / oneDayMs).toFixed(2)),
      };
      progress(
        `${name}: ${seededMs.toFixed(1)} ms in the seeded project, ${emptyMs.toFixed(1)} ms in an empty one (${(seededMs / emptyMs).toFixed(2)}×), ` +
          `${oneDayMs.toFixed(1)} ms in the one holding only the day (seeded ${(seededMs / oneDayMs).toFixed(2)}× that)`,
      );
      for (const kind of extraRounds) {
        const ms = median(samples[kind].map(pick));
        withExtra[kind][name] = {
          ms: Number(ms.toFixed(1)),
          seededMs: Number(seededMs.toFixed(1)),
          ratio: Number((ms / seededMs).toFixed(2)),
        };
        progress(
          `${name} with ${extraTraces[kind]} ${kind === 'continuing' ? 'traces continuing sessions' : `${kind} traces`}: ${ms.toFixed(1)} ms ` +
            `(${(ms / seededMs).toFixed(2)}× the seeded project's without)`,
        );
      }
    }
    // Each statement's median time a round (0 in a round that did not send it), per kind of round.
    const statementNames = [...new Set(kinds.flatMap((kind) => statementSamples[kind].flatMap((times) => [...times.keys()])))].sort();
    const statements = Object.fromEntries(
      statementNames.map((name) => [
        name,
        Object.fromEntries(
          kinds.map((kind) => [kind, Number(median(statementSamples[kind].map((times) => times.get(name) ?? 0)).toFixed(1))]),
        ),
      ]),
    );
    for (const [name, byKind] of Object.entries(statements))
      progress(
        `  ${name}: ${Object.entries(byKind)
          .map(([kind, ms]) => `${kind} ${ms}`)
          .join(', ')} ms`,
      );
    writeResults({
      upkeep: {
        ...report,
        statements,
        oneDayTraces: oneDay.traces,
        oneDayFeedback: oneDay.feedback,
        tracesPerRound: traces,
        rounds,
        windowSeconds: windowMs / 1000,
        ...Object.fromEntries(extraRounds.map((kind) => [kind, { traces: extraTraces[kind], ...withExtra[kind] }])),
        conditionCacheMiB,
        engineAllocatorDirtyDecayMs: allocatorDecayMs,
        dataset: { spans: seed.spans, traces: seed.traces },
      },
    });
  } finally {
    await client.close();
    rmSync(copy, { recursive: true, force: true });
  }
}

main().then(
  () => process.exit(0),
  (error: Error) => {
    process.stderr.write(`bench:upkeep failed: ${error.stack ?? error.message}\n`);
    process.exit(1);
  },
);
