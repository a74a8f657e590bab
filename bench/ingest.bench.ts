import { DETECTORS, type DataPolicyInput } from '@spanforge/policy';
import 'reflect-metadata';
import { execFile } from 'node:child_process';
import { rmSync, writeFileSync } from 'node:fs';
import { promisify } from 'node:util';
import os from 'node:os';
import path from 'node:path';
import { SPAN_BATCH } from '@spanforge/worker-app';
import { decodeProtobufExport, rejectReasonOf } from '@spanforge/otlp';
import { normalizeSpan } from '@spanforge/semconv';
import { PriceTable, priceSpan } from '@spanforge/pricing';
import { SpanRepository, conformRow, serialiseRow, toSpanRow, type SpanRow } from '@spanforge/ingest';
import type { BenchStack } from './bench-stack';
import { buildCorpus, type Corpus } from './corpus';
import { cpuSince, cpuSnapshot } from './cpu';
import { profiled } from './profile';
import { measureQueueHop } from './queue-hop';
import { quiet, reportedAllocatorDecay, reportedEngineSettings, startBenchStack, temporaryDataDir } from './bench-stack';
import { argument, progress, writeResults } from './report';

const run = promisify(execFile);

/**
 * `npm run bench:ingest [-- --traces N]`: decode rate on one core; end-to-end spans/s through the
 * all-in-one (HTTP → gateway → queue → worker → ClickHouse); the floor, i.e. the raw insert rate of
 * the same rows into the same ClickHouse; their ratio; sent vs stored; and the queue hop per span.
 */
async function main(): Promise<void> {
  // 15,000 traces (~118,000 spans, ~10 s end to end): long enough that start-up and the last batch do not dominate.
  const traces = Number(argument('--traces', '15000'));
  progress(`building a corpus of ${traces} agent traces (seed 42)`);
  const corpus = buildCorpus({ traces });
  progress(`${corpus.spanCount} spans in ${corpus.requests.length} OTLP requests of up to 512 spans`);

  const decode = measureDecode(corpus);
  progress(`decode: ${Math.round(decode)} spans/s on one core`);

  const dataDir = temporaryDataDir('spanforge-bench-');
  const infra = await startBenchStack(dataDir, { QUEUE_MAX_BACKLOG: '1000000' });
  try {
    const allocatorDecayMs = await reportedAllocatorDecay(infra.clickhouse);
    const settings = await reportedEngineSettings(infra.clickhouse);
    const queueHop = await measureQueueHop(infra, corpus);
    progress(
      `queue hop: per-span JSON jobs ${queueHop.perSpanJsonCpuUsPerSpan.toFixed(1)} µs CPU/span, one job per export ${queueHop.perExportBytesCpuUsPerSpan.toFixed(1)} µs CPU/span`,
    );

    // The floor is measured before and after the end-to-end run, each time on a quiet engine
    // (no background merges), and averaged: merges left by one phase would otherwise tax the next.
    const { validation, floor: floorBefore, cpu: floorCpu } = await checksAndFloor(infra, corpus);
    await quiet(infra.clickhouse);
    await infra.startWorkers();
    const [httpLine] = await infra.startGateway();
    const endpoint = /http:\/\/\S+/.exec(httpLine!)![0];
    const cpu = cpuSnapshot();
    const { result: e2e, statements } = await timedStatements(infra, () =>
      profiled('ingest-e2e', process.argv.includes('--profile'), () => measureEndToEnd(infra, corpus, endpoint)),
    );
    const e2eCpu = cpuSince(cpu);
    progress(`CPU seconds: floor ${JSON.stringify(floorCpu)}, end to end ${JSON.stringify(e2eCpu)}`);
    for (const line of statements) progress(`  at the engine: ${line.name}: ${line.count} statements, ${line.seconds.toFixed(2)} s`);
    progress(
      `end to end: ${Math.round(e2e.spansPerSec)} spans/s stored, ${Math.round(e2e.settledSpansPerSec)} spans/s with figures up to date; stored ${e2e.stored} of ${corpus.spanCount}`,
    );
    await quiet(infra.clickhouse);
    const floorAfter = await measureFloor(infra, await floorRows(infra, corpus));
    progress(`floor again: ${Math.round(floorAfter)} spans/s`);
    const floor = (floorBefore + floorAfter) / 2;
    progress(
      `ratio end to end / floor: ${(e2e.spansPerSec / floor).toFixed(3)} stored, ${(e2e.settledSpansPerSec / floor).toFixed(3)} settled`,
    );
    // A data policy's cost: the same corpus to projects without a policy, with redaction, and with
    // a retention (rows then carry it and fall into partitions by week of expiry), in the order
    // without, redaction, retention, retention, redaction, without, so that merges left by one run
    // tax every side alike.
    const policyRuns: Record<PolicySide, number[]> = { plain: [], policy: [], retention: [] };
    for (const side of ['plain', 'policy', 'retention', 'retention', 'policy', 'plain'] as const) {
      await quiet(infra.clickhouse);
      const run = await measureEndToEnd(infra, corpus, endpoint, POLICY_OF[side]);
      if (run.stored !== corpus.spanCount) throw new Error(`${side} run stored ${run.stored} of ${corpus.spanCount} spans`);
      policyRuns[side].push(run.spansPerSec);
      progress(`end to end ${side === 'plain' ? 'without a data policy' : `with ${side}`}: ${Math.round(run.spansPerSec)} spans/s stored`);
    }
    const mean = (values: number[]) => values.reduce((a, b) => a + b, 0) / values.length;
    const policyRatio = mean(policyRuns.policy) / mean(policyRuns.plain);
    const retentionRatio = mean(policyRuns.retention) / mean(policyRuns.plain);
    progress(`data policy (every detector, two patterns): ${policyRatio.toFixed(3)} of the throughput without one`);
    progress(`retention (${BENCH_RETENTION.retentionDays} days): ${retentionRatio.toFixed(3)} of the throughput without one`);
    const storage = await measureStorage(infra);
    progress(
      `on disk after merges: ${storage.spanRows} span rows, ${storage.bytesPerSpan.spans} B a span in spans, ${storage.bytesPerSpan.allTables} B a span in every table (compressed ${storage.compression}x)`,
    );

    const results = {
      ingest: {
        floorBeforeSpansPerSec: Math.round(floorBefore),
        floorAfterSpansPerSec: Math.round(floorAfter),
        decodeSpansPerSec: Math.round(decode),
        e2eSpansPerSec: Math.round(e2e.spansPerSec),
        floorSpansPerSec: Math.round(floor),
        ratio: Number((e2e.spansPerSec / floor).toFixed(3)),
        e2eSettledSpansPerSec: Math.round(e2e.settledSpansPerSec),
        settledRatio: Number((e2e.settledSpansPerSec / floor).toFixed(3)),
        sentSpans: corpus.spanCount,
        storedSpans: e2e.stored,
        batch: SPAN_BATCH,
        engineAllocatorDirtyDecayMs: allocatorDecayMs,
        engineSettings: settings,
        cpuSeconds: { floor: floorCpu, endToEnd: e2eCpu },
        statementSeconds: statements,
        queueHop,
        policy: {
          plainSpansPerSec: policyRuns.plain.map(Math.round),
          policySpansPerSec: policyRuns.policy.map(Math.round),
          ratio: Number(policyRatio.toFixed(3)),
          retentionSpansPerSec: policyRuns.retention.map(Math.round),
          retentionRatio: Number(retentionRatio.toFixed(3)),
        },
        validation: {
          ...validation,
          // What the checks add to one span's cost end to end (the pipeline spends 1e6 / e2eSpansPerSec µs a span).
          shareOfEndToEnd: Number(
            (
              (validation.spanCheckUs * 2 + validation.rowCheckUs + Math.max(0, validation.serialiseUs - validation.stringifyUs)) /
              (1e6 / e2e.spansPerSec)
            ).toFixed(4),
          ),
        },
      },
      storage,
      dataset: { spans: corpus.spanCount, traces: corpus.traceCount, requests: corpus.requests.length },
    };
    writeResults(results);
  } finally {
    await infra.shutdown.run();
    rmSync(dataDir, { recursive: true, force: true });
  }
}

/**
 * The store-domain checks and the floor before the end-to-end run, on rows built here and dropped
 * when it returns: kept alive through the run, they would charge the server in this process with
 * garbage collection no server of ours does (with the corpus's span objects and the server's own
 * data, full collections left 465–641 MB live during one end-to-end run).
 */
async function checksAndFloor(
  infra: BenchStack,
  corpus: Corpus,
): Promise<{ validation: ReturnType<typeof measureValidation>; floor: number; cpu: ReturnType<typeof cpuSince> }> {
  const rows = await floorRows(infra, corpus);
  const validation = measureValidation(corpus, rows);
  progress(
    `store-domain checks: ${validation.spanCheckUs.toFixed(3)} µs/span before the 200, ${validation.rowCheckUs.toFixed(3)} µs/row in the row builder, serialisation ${validation.serialiseUs.toFixed(3)} µs/row against ${validation.stringifyUs.toFixed(3)} with JSON.stringify alone`,
  );
  await quiet(infra.clickhouse);
  const before = cpuSnapshot();
  const floor = await measureFloor(infra, rows);
  const cpu = cpuSince(before);
  progress(`floor (raw insert of the same rows): ${Math.round(floor)} spans/s`);
  return { validation, floor, cpu };
}

function measureDecode(corpus: Corpus): number {
  const rounds = 3;
  let spans = 0;
  decodeProtobufExport(corpus.requests[0]!); // warm up
  const started = performance.now();
  for (let r = 0; r < rounds; r++) for (const request of corpus.requests) spans += decodeProtobufExport(request).spans.length;
  return spans / ((performance.now() - started) / 1000);
}

/**
 * The cost of checking values against what the store holds, per span, on the corpus: the span rules
 * the gateway and the worker's decoder apply (rejectReasonOf), the row builder's last guard
 * (conformRow), and its serialisation (serialiseRow: JSON.stringify plus a scan for lone surrogates).
 */
function measureValidation(
  corpus: Corpus,
  rows: SpanRow[],
): { spanCheckUs: number; rowCheckUs: number; serialiseUs: number; stringifyUs: number } {
  const spans = corpus.requests.flatMap((request) => decodeProtobufExport(request).spans);
  const perItem = (count: number, work: () => void) => {
    work(); // warm up
    const rounds = 5;
    const started = performance.now();
    for (let r = 0; r < rounds; r++) work();
    return ((performance.now() - started) * 1000) / (rounds * count);
  };
  let sink = 0;
  const spanCheckUs = perItem(spans.length, () => {
    for (const span of spans) sink += rejectReasonOf(span) === undefined ? 1 : 0;
  });
  const rowCheckUs = perItem(rows.length, () => {
    for (const row of rows) sink += conformRow(row).length;
  });
  const serialiseUs = perItem(rows.length, () => {
    for (const row of rows) sink += serialiseRow(row).length;
  });
  const stringifyUs = perItem(rows.length, () => {
    for (const row of rows) sink += JSON.stringify(row).length;
  });
  if (sink < 0) progress('unreachable');
  const round = (n: number) => Number(n.toFixed(3));
  return {
    spanCheckUs: round(spanCheckUs),
    rowCheckUs: round(rowCheckUs),
    serialiseUs: round(serialiseUs),
    stringifyUs: round(stringifyUs),
  };
}

async function newProject(infra: BenchStack, name: string) {
  const { tenant, project } = await infra.tenancy.createTenant(name);
  const { secret } = await infra.tenancy.createApiKey(project.id, 'bench');
  return { tenantId: tenant.id, projectId: project.id, secret };
}

/** Distinct spans stored (final = true), or rows written so far (cheap enough to poll while measuring). */
async function storedSpans(infra: BenchStack, projectId: string, final = true): Promise<number> {
  const result = await infra.clickhouse.query({
    query: `SELECT count() AS n FROM spans ${final ? 'FINAL' : ''} WHERE project_id = {projectId:String}`,
    query_params: { projectId },
    format: 'JSONEachRow',
  });
  const [row] = await result.json<{ n: string }>();
  return Number(row?.n ?? 0);
}

interface EndToEnd {
  /** Spans/s until every span sent is stored (queryable). */
  spansPerSec: number;
  /** Spans/s until every export's job is acknowledged: its traces' figures, sessions and daily costs are up to date too. */
  settledSpansPerSec: number;
  stored: number;
}

/**
 * A data policy with every detector and two patterns (an order id and a customer id; the corpus
 * has neither): what a project that turns redaction on asks of each span it stores.
 */
const BENCH_POLICY: DataPolicyInput = {
  redaction: { detectors: [...DETECTORS], patterns: ['ORD-[0-9]{6}', 'CUST-[0-9A-F]{8}'] },
};

/**
 * A retention that keeps the whole corpus (it starts on 2026-11-01): each span is checked against
 * it at arrival and its rows are partitioned by their week of expiry.
 */
const BENCH_RETENTION: DataPolicyInput = { retentionDays: 3650 };

type PolicySide = 'plain' | 'policy' | 'retention';
const POLICY_OF: Record<PolicySide, DataPolicyInput | undefined> = { plain: undefined, policy: BENCH_POLICY, retention: BENCH_RETENTION };

async function measureEndToEnd(infra: BenchStack, corpus: Corpus, endpoint: string, policy?: DataPolicyInput): Promise<EndToEnd> {
  const project = await newProject(infra, policy ? 'bench-e2e-policy' : 'bench-e2e');
  if (policy) await infra.policies.update(project.projectId, policy);
  // The client runs in its own process (bench/load-client.ts), as clients do.
  const file = path.join(os.tmpdir(), `spanforge-bench-requests-${process.pid}.bin`);
  writeFileSync(file, Buffer.concat(corpus.requests.flatMap((r) => [lengthPrefix(r), Buffer.from(r)])));
  const started = performance.now();
  const { stdout } = await run(process.execPath, [path.join(__dirname, 'load-client.js'), file, endpoint, project.secret, '4']);
  rmSync(file, { force: true });
  progress(
    `all ${corpus.requests.length} exports answered 200 after ${Number(stdout.trim()).toFixed(2)} s (client process); waiting for storage`,
  );
  const deadline = Date.now() + 10 * 60_000;
  while (Date.now() < deadline && (await storedSpans(infra, project.projectId, false)) < corpus.spanCount) {
    await new Promise((r) => setTimeout(r, 250));
  }
  const storedSeconds = (performance.now() - started) / 1000;
  // Every span is stored, so every export's job has been taken; the ones still active wait for their upkeep.
  while (Date.now() < deadline && (await activeJobs(infra)) > 0) await new Promise((r) => setTimeout(r, 10));
  const settledSeconds = (performance.now() - started) / 1000;
  return {
    spansPerSec: corpus.spanCount / storedSeconds,
    settledSpansPerSec: corpus.spanCount / settledSeconds,
    stored: await storedSpans(infra, project.projectId),
  };
}

/**
 * Where the engine's time went while `work` ran, per statement name: the time each of the
 * worker's and the API's statements held its turn at the engine (in the all-in-one on embedded
 * ClickHouse, one statement at a time), from the scheduler that gives the turns.
 */
async function timedStatements<T>(
  infra: BenchStack,
  work: () => Promise<T>,
): Promise<{ result: T; statements: { name: string; count: number; seconds: number }[] }> {
  const byName = new Map<string, { count: number; ms: number }>();
  let recording = true;
  infra.querySlots.observeRuns((_participant, ranMs, statement) => {
    if (!recording) return;
    const name = statement || 'unnamed';
    const entry = byName.get(name) ?? { count: 0, ms: 0 };
    entry.count++;
    entry.ms += ranMs;
    byName.set(name, entry);
  });
  try {
    const result = await work();
    return {
      result,
      statements: [...byName]
        .map(([name, { count, ms }]) => ({ name, count, seconds: Number((ms / 1000).toFixed(3)) }))
        .sort((a, b) => b.seconds - a.seconds),
    };
  } finally {
    recording = false;
  }
}

async function activeJobs(infra: BenchStack): Promise<number> {
  const metric = await infra.metrics.getSingleMetric('spanforge_worker_jobs_active')?.get();
  return metric?.values[0]?.value ?? 0;
}

function lengthPrefix(body: Uint8Array): Buffer {
  const prefix = Buffer.alloc(4);
  prefix.writeUInt32BE(body.length);
  return prefix;
}

/** The same rows the worker writes for the corpus (decoded, normalised, priced), for a new project. */
async function floorRows(infra: BenchStack, corpus: Corpus): Promise<SpanRow[]> {
  const project = await newProject(infra, 'bench-floor');
  const table = PriceTable.bundled();
  const rows: SpanRow[] = [];
  for (const request of corpus.requests) {
    for (const span of decodeProtobufExport(request).spans) {
      const normalized = normalizeSpan(span);
      const price = priceSpan(
        {
          pricingModel: normalized.pricingModel,
          provider: normalized.provider,
          usage: normalized.usage,
          explicitCostUsd: normalized.explicitCostUsd,
          startTime: span.startTimeUnixNano,
        },
        table,
      );
      rows.push(toSpanRow(project.tenantId, project.projectId, span, normalized, price));
    }
  }
  return rows;
}

/** The raw insert rate: the rows straight into the same table (materialized views included), in the worker's batch size. */
async function measureFloor(infra: BenchStack, rows: SpanRow[]): Promise<number> {
  const repository = new SpanRepository(infra.clickhouse);
  const started = performance.now();
  for (let i = 0; i < rows.length; i += SPAN_BATCH.maxItems) {
    await repository.insertSpanLines(rows.slice(i, i + SPAN_BATCH.maxItems).map((row) => Buffer.from(`${JSON.stringify(row)}\n`)));
  }
  return rows.length / ((performance.now() - started) / 1000);
}

main().then(
  () => process.exit(0),
  (error: Error) => {
    process.stderr.write(`bench:ingest failed: ${error.stack ?? error.message}\n`);
    process.exit(1);
  },
);

/**
 * Bytes on disk per stored span, of the spans table and of every table (rollups, figures, indexes,
 * accounting), after merging every table's parts (what a settled day looks like): everything this
 * run stored, which is the corpus several times over.
 */
async function measureStorage(infra: BenchStack): Promise<{
  spanRows: number;
  bytesPerSpan: { spans: number; allTables: number };
  compression: number;
  tables: Record<string, { rows: number; bytesOnDisk: number }>;
}> {
  const tables = await (
    await infra.clickhouse.query({
      query: "SELECT name FROM system.tables WHERE database = currentDatabase() AND engine LIKE '%MergeTree'",
      format: 'JSONEachRow',
    })
  ).json<{ name: string }>();
  for (const { name } of tables) await infra.clickhouse.command({ query: `OPTIMIZE TABLE ${name} FINAL` });
  const parts = await (
    await infra.clickhouse.query({
      query: `SELECT table, sum(rows) AS rows, sum(bytes_on_disk) AS disk, sum(data_uncompressed_bytes) AS raw FROM system.parts
              WHERE active AND database = currentDatabase() GROUP BY table`,
      format: 'JSONEachRow',
    })
  ).json<{ table: string; rows: string; disk: string; raw: string }>();
  const byTable = Object.fromEntries(parts.map((p) => [p.table, { rows: Number(p.rows), bytesOnDisk: Number(p.disk) }]));
  const spanRows = byTable.spans?.rows ?? 0;
  const disk = parts.reduce((n, p) => n + Number(p.disk), 0);
  const raw = parts.reduce((n, p) => n + Number(p.raw), 0);
  return {
    spanRows,
    bytesPerSpan: {
      spans: Math.round((byTable.spans?.bytesOnDisk ?? 0) / Math.max(1, spanRows)),
      allTables: Math.round(disk / Math.max(1, spanRows)),
    },
    compression: Number((raw / Math.max(1, disk)).toFixed(2)),
    tables: byTable,
  };
}
