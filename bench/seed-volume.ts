import 'reflect-metadata';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import {
  REFRESH_ALL_SESSION_FIGURES_SQL,
  REFRESH_COST_DAILY_SQL,
  REFRESH_COST_MINUTE_SQL,
  REFRESH_DAY_TRACE_FIGURES_SQL,
  REFRESH_TRACE_METRICS_HOUR_SQL,
  REFRESH_TRACE_METRICS_MINUTE_SQL,
  SEAL_SAFETY_SECONDS,
  type ClickHouseClient,
} from '@spanforge/clickhouse';
import { SpanMetricsSealer } from '@spanforge/ingest';
import type { BenchStack } from './bench-stack';
import { quiet, startBenchStack, seededDatasetArguments } from './bench-stack';
import { progress } from './report';

/**
 * `npm run seed:volume -- --spans N [--data-dir DIR]`: N spans of agent traces generated inside
 * ClickHouse (INSERT … SELECT FROM numbers(), a fixed seed in every hash, so the same N always gives
 * the same data), through the same materialized views as ingest. 10 spans a trace: a run root,
 * then three (agent, LLM, tool) blocks; 1–3 of the agents are iterations, ~10 % of roots state a
 * high iteration count (loops), 3 % of LLM calls fail, 20 traces a session, a model mix, over 30 days,
 * and feedback on ~40 % of the traces. Once per data directory, as the benches seed: it records the
 * dataset in `seed-N.json` there, and run again on that directory it prints the record instead.
 */
const SPANS_PER_TRACE = 10;
const CHUNK_SPANS = 500_000;

export interface SeedResult {
  tenantId: string;
  projectId: string;
  apiKey: string;
  spans: number;
  traces: number;
  from: string;
  to: string;
}

export const SEED_BASE_MS = Date.UTC(2026, 9, 1);
export const SEED_DAYS = 30;

function chunkSql(): string {
  // Per trace t: start spread over 30 days; per span p (0..9) within the trace.
  return `
INSERT INTO spans (tenant_id, project_id, trace_id, span_id, parent_span_id, trace_state, flags, name, kind, service_name, scope_name, scope_version,
  start_time, end_time, duration_ns, status_code, status_message, span_type, convention, operation, session_id, user_id, run_id, agent_name, tool_name,
  model, model_requested, provider, tokens_input_uncached, tokens_cache_read, tokens_cache_write, tokens_output, tokens_reasoning, usage_is_aggregate,
  cost_usd, cost_source, price_version, ttft_ms, error_type, iterations, attributes, attribute_json_keys, resource_attributes, input, output,
  dropped_attributes_count, dropped_events_count, dropped_links_count, truncated)
SELECT
  {tenantId:String}, {projectId:String},
  lower(hex(reinterpretAsFixedString(cityHash64(t, 1)))) || lower(hex(reinterpretAsFixedString(cityHash64(t, 2)))) AS trace_id,
  lower(hex(reinterpretAsFixedString(cityHash64(t, p, 3)))) AS span_id,
  multiIf(p = 0, '', p IN (1, 4, 7), lower(hex(reinterpretAsFixedString(cityHash64(t, 0, 3)))), lower(hex(reinterpretAsFixedString(cityHash64(t, p - if(p IN (2, 5, 8), 1, 2), 3))))) AS parent_span_id,
  '', 1,
  multiIf(p = 0, 'agent.run', p IN (1, 4, 7), if(block <= iterations_counted, 'invoke_agent planner', 'retrieval knowledge-base'), p IN (2, 5, 8), concat('chat ', model_name), concat('execute_tool ', tool)) AS name,
  if(p = 0, 'SERVER', if(p IN (2, 5, 8), 'CLIENT', 'INTERNAL')),
  'bench-agent', 'seed', '1.0',
  span_start, span_end, toUInt64(duration_ms * 1000000),
  if(is_error, 'ERROR', 'UNSET'), if(is_error, 'provider error', ''),
  multiIf(p = 0, 'RUN', p IN (1, 4, 7), if(block <= iterations_counted, 'AGENT', 'RETRIEVAL'), p IN (2, 5, 8), 'LLM', 'TOOL') AS span_type,
  'gen_ai', '', concat('session-', toString(intDiv(t, 20))), concat('user-', toString(intDiv(t, 20) % 500)), '', if(p IN (1, 4, 7), 'planner', ''), if(p IN (3, 6, 9), tool, ''),
  if(p IN (2, 5, 8), model_name, ''), if(p IN (2, 5, 8), model_name, ''), if(p IN (2, 5, 8), provider_name, ''),
  if(p IN (2, 5, 8), input_tokens - cached, 0), if(p IN (2, 5, 8), cached, 0), 0, if(p IN (2, 5, 8), output_tokens, 0), 0, 0,
  if(p IN (2, 5, 8), ((input_tokens - cached) * price_in + cached * price_in / 10 + output_tokens * price_out) / 1e6, 0),
  if(p IN (2, 5, 8), 'price_table', ''), if(p IN (2, 5, 8), 'seed', ''),
  if(p IN (2, 5, 8), toNullable(duration_ms * 0.2), NULL),
  if(is_error, '429', ''),
  if(p = 0 AND cityHash64(t, 9) % 10 = 0, toInt32(5 + cityHash64(t, 10) % 8), -1),
  map('gen_ai.agent.name', 'support-agent'), [], map('service.name', 'bench-agent'), '', '', 0, 0, 0, 0
FROM (
  SELECT number AS n, intDiv(n, ${SPANS_PER_TRACE}) AS t, n % ${SPANS_PER_TRACE} AS p, intDiv(p + 2, 3) AS block,
    1 + cityHash64(t, 4) % 3 AS iterations_counted,
    ['gpt-4o-mini', 'gpt-4o', 'claude-3-5-sonnet-20241022', 'gemini-2.0-flash', 'mistral-large-latest'][1 + cityHash64(t, p, 5) % 5] AS model_name,
    ['openai', 'openai', 'anthropic', 'gcp.gemini', 'mistral_ai'][1 + cityHash64(t, p, 5) % 5] AS provider_name,
    [0.15, 2.5, 3.0, 0.1, 2.0][1 + cityHash64(t, p, 5) % 5] AS price_in,
    [0.6, 10.0, 15.0, 0.4, 6.0][1 + cityHash64(t, p, 5) % 5] AS price_out,
    ['search_web', 'read_file', 'run_sql', 'get_weather', 'send_email'][1 + cityHash64(t, p, 6) % 5] AS tool,
    200 + cityHash64(t, p, 7) % 3000 AS input_tokens,
    if(cityHash64(t, p, 8) % 10 < 4, intDiv(input_tokens, 2), 0) AS cached,
    20 + cityHash64(t, p, 11) % 600 AS output_tokens,
    p IN (2, 5, 8) AND cityHash64(t, p, 12) % 100 < 3 AS is_error,
    fromUnixTimestamp64Milli(toInt64({baseMs:Int64} + t * {stepMs:Float64}), 'UTC') AS trace_start,
    multiIf(p = 0, 0, p IN (1, 2), 1, p = 3, 1200, p IN (4, 5), 2000, p = 6, 3200, p IN (7, 8), 4000, 5200) + cityHash64(t, p, 13) % 200 AS offset_ms,
    multiIf(p = 0, 6500, p IN (1, 4, 7), 1150, p IN (2, 5, 8), 300 + cityHash64(t, p, 14) % 800, 50 + cityHash64(t, p, 15) % 700) AS duration_ms,
    addMilliseconds(trace_start, offset_ms) AS span_start,
    addMilliseconds(span_start, duration_ms) AS span_end
  FROM numbers({first:UInt64}, {count:UInt64})
)`;
}

export async function seedVolume(infra: BenchStack, spans: number): Promise<SeedResult> {
  const traces = Math.ceil(spans / SPANS_PER_TRACE);
  const { tenant, project } = await infra.tenancy.createTenant(`seed-${spans}`);
  const { secret } = await infra.tenancy.createApiKey(project.id, 'seed');
  const stepMs = (SEED_DAYS * 86_400_000) / traces;
  const total = traces * SPANS_PER_TRACE;
  const started = performance.now();
  for (let first = 0; first < total; first += CHUNK_SPANS) {
    const count = Math.min(CHUNK_SPANS, total - first);
    await infra.clickhouse.command({
      query: chunkSql(),
      query_params: { tenantId: tenant.id, projectId: project.id, first, count, baseMs: SEED_BASE_MS, stepMs },
    });
    const done = first + count;
    const bar = '#'.repeat(Math.round((30 * done) / total)).padEnd(30, '.');
    const rate = done / ((performance.now() - started) / 1000);
    process.stderr.write(
      `\r[${bar}] ${done.toLocaleString('en')} / ${total.toLocaleString('en')} spans  ${Math.round(rate).toLocaleString('en')} spans/s `,
    );
  }
  process.stderr.write('\n');
  // Feedback: ~30 % of traces get a "helpful" score (1–5) and ~10 % a thumbs up or down.
  await infra.clickhouse.command({
    query: `INSERT INTO feedback (tenant_id, project_id, trace_id, id, span_id, name, data_type, value_number, value_text, comment, source)
      SELECT {tenantId:String}, {projectId:String},
        lower(hex(reinterpretAsFixedString(cityHash64(t, 1)))) || lower(hex(reinterpretAsFixedString(cityHash64(t, 2)))),
        concat('seed-', toString(t), '-', name), '', name, data_type, value, toString(value), '', 'seed'
      FROM (
        SELECT number AS t, cityHash64(t, 20) % 10 AS roll,
          if(roll < 3, 'helpful', 'thumbs') AS name, if(roll < 3, 'NUMERIC', 'BOOLEAN') AS data_type,
          toFloat64(if(roll < 3, 1 + cityHash64(t, 21) % 5, cityHash64(t, 22) % 2)) AS value
        FROM numbers({traces:UInt64}) WHERE roll < 4)`,
    query_params: { tenantId: tenant.id, projectId: project.id, traces },
  });
  // Bulk loads skip the worker, so the per-trace and per-session figures are computed here, a day at a time.
  const scope = { tenantId: tenant.id, projectId: project.id };
  for (let d = 0; d <= SEED_DAYS; d++) {
    await figuresOfDay(infra.clickhouse, scope, new Date(SEED_BASE_MS + d * 86_400_000).toISOString().slice(0, 10));
    process.stderr.write(`\rfigures: day ${d + 1} of ${SEED_DAYS + 1} `);
  }
  await infra.clickhouse.command({ query: REFRESH_ALL_SESSION_FIGURES_SQL, query_params: scope });
  process.stderr.write('\n');
  return {
    tenantId: tenant.id,
    projectId: project.id,
    apiKey: secret,
    spans: total,
    traces,
    from: new Date(SEED_BASE_MS).toISOString(),
    to: new Date(SEED_BASE_MS + SEED_DAYS * 86_400_000).toISOString(),
  };
}

/**
 * Computes what the worker's upkeep would have of the traces of one project that start on `day`
 * (YYYY-MM-DD, UTC) after a bulk load: their figures, then the day's minutes of costs and trace
 * metrics, its hours, and its daily costs. The sessions' figures are the caller's to compute (a
 * session may span days).
 */
export async function figuresOfDay(client: ClickHouseClient, scope: { tenantId: string; projectId: string }, day: string): Promise<void> {
  await client.command({ query: REFRESH_DAY_TRACE_FIGURES_SQL, query_params: { ...scope, day } });
  const dayMs = Date.parse(`${day}T00:00:00Z`);
  const minutes = Array.from({ length: 1440 }, (_, m) => dayMs + m * 60_000);
  await client.command({ query: REFRESH_COST_MINUTE_SQL, query_params: { ...scope, minutes } });
  await client.command({ query: REFRESH_TRACE_METRICS_MINUTE_SQL, query_params: { ...scope, minutes } });
  await client.command({
    query: REFRESH_TRACE_METRICS_HOUR_SQL,
    query_params: { ...scope, hours: minutes.filter((_, m) => m % 60 === 0) },
  });
  await client.command({ query: REFRESH_COST_DAILY_SQL, query_params: { ...scope, days: [day] } });
}

/** The dataset of `spans` spans in `dataDir`: seeded on first use, then read from `seed-<spans>.json`. */
export async function seededOnce(infra: BenchStack, dataDir: string, spans: number): Promise<SeedResult> {
  const seedFile = path.join(dataDir, `seed-${spans}.json`);
  if (existsSync(seedFile)) {
    const seed = JSON.parse(readFileSync(seedFile, 'utf8')) as SeedResult;
    progress(`using the ${seed.spans.toLocaleString('en')} spans seeded earlier in ${dataDir}`);
    return seed;
  }
  progress(`seeding ${spans.toLocaleString('en')} spans (once per data directory)`);
  const seed = await seedVolume(infra, spans);
  writeFileSync(seedFile, JSON.stringify(seed), { mode: 0o600 });
  return seed;
}

async function main(): Promise<void> {
  const { spans, dataDir } = seededDatasetArguments();
  const infra = await startBenchStack(dataDir);
  try {
    // The same record the benches keep (seededOnce): bench:query, bench:upkeep and bench:erasure
    // given this --data-dir then use the dataset instead of seeding another into it.
    const result = await seededOnce(infra, dataDir, spans);
    progress(`the dataset's project is ${result.projectId} (its API key is in the JSON on stdout)`);
    process.stdout.write(`${JSON.stringify(result)}\n`);
  } finally {
    await infra.shutdown.run();
  }
}

if (require.main === module) {
  main().catch((error: Error) => {
    process.stderr.write(`seed:volume failed: ${error.stack ?? error.message}\n`);
    process.exit(1);
  });
}

/**
 * Seals every minute of the project into the span metrics rollup, as the worker's sealer would have
 * (the bench runs no worker, and its dataset may have been seeded days ago).
 */
export async function sealSeededMinutes(infra: BenchStack, scope: { tenantId: string; projectId: string }): Promise<void> {
  const result = await infra.clickhouse.query({
    query: `SELECT toUnixTimestamp64Milli(minute) AS ms FROM span_minute_marks FINAL WHERE tenant_id = {tenantId:String} AND project_id = {projectId:String}`,
    query_params: scope,
    format: 'JSONEachRow',
  });
  const minutes = (await result.json<{ ms: string }>()).map((row) => Number(row.ms));
  // A computation vouches for rows stored SEAL_SAFETY_SECONDS before it ran: a dataset seeded just
  // now is sealed once that has passed, as the worker's sealer would.
  const newest = await infra.clickhouse.query({
    query: `SELECT toUnixTimestamp64Milli(max(dirty_at)) AS ms FROM span_minute_marks WHERE tenant_id = {tenantId:String} AND project_id = {projectId:String}`,
    query_params: scope,
    format: 'JSONEachRow',
  });
  const [{ ms: newestMs } = { ms: '0' }] = await newest.json<{ ms: string }>();
  const wait = Number(newestMs) + (SEAL_SAFETY_SECONDS + 1) * 1000 - Date.now();
  if (wait > 0) {
    progress(`waiting ${Math.ceil(wait / 1000)} s for the seeded rows to be older than the seal's safety margin`);
    await new Promise((resolve) => setTimeout(resolve, wait));
  }
  const started = performance.now();
  const sealer = new SpanMetricsSealer(infra.clickhouse, infra.log, { afterSeconds: 0, intervalMs: 3_600_000, minutesPerStatement: 1_440 });
  await sealer.seal(scope, minutes);
  progress(
    `sealed ${minutes.length.toLocaleString('en')} minutes into span_metrics_minute in ${Math.round(performance.now() - started)} ms`,
  );
  await quiet(infra.clickhouse);
}
