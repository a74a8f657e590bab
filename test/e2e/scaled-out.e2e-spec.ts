import { chmodSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { ReadableSpan, SpanExporter } from '@opentelemetry/sdk-trace';
import Redis from 'ioredis';
import { startEmbeddedPostgres, type EmbeddedPostgresHandle } from '@spanforge/postgres';
import { expectedLlmCost, expectedTrace, recordAgentTrace, type LlmCall } from '../integration/agent-trace';
import {
  SpanRecorder,
  entryPoint,
  exportSpans,
  exportSucceeded,
  freePorts,
  graphql,
  otlpExporter,
  startProcess,
  startRedisServer,
  waitFor,
  type ServerProcess,
} from '../support';
import { startChdbHttpServer, type ChdbHttpServer } from '../support/chdb-http-server';

/**
 * The roles scaled out as the README describes them: two gateways, two workers and one api, each a
 * process of its own, sharing PostgreSQL (embedded, started here), a redis-server and one ClickHouse
 * over HTTP (chDB behind a test-only HTTP endpoint: no ClickHouse server can be installed here).
 * Every trace is exported half through each gateway at once, so its spans reach both workers; the
 * api must then answer every figure as computed from the spans sent.
 */
const MINI: LlmCall = { model: 'gpt-4o-mini', provider: 'openai', input: 1_000, cacheRead: 200, output: 100 };
const SONNET: LlmCall = { model: 'claude-3-5-sonnet-20241022', provider: 'anthropic', input: 3_000, cacheRead: 0, output: 400 };
const TRACES = 24;
/** Traces sent while one worker is killed. */
const BURST = 120;
const SESSIONS = 4;
/** 09:00 UTC; traces alternate between this day and the next, so the daily costs have two days. */
const BASE = Date.UTC(2026, 10, 20, 9);
const DAY = 86_400_000;

type Role = 'gateway' | 'worker' | 'api';

describe('roles as separate processes on shared services', () => {
  const root = mkdtempSync(path.join(os.tmpdir(), 'spanforge-scaled-'));
  // The postgres user (as root) must traverse it to keep the cluster inside.
  chmodSync(root, 0o755);
  const adminToken = 'scaled-admin-token-0123456789';
  let postgres: EmbeddedPostgresHandle | undefined;
  let redis: Awaited<ReturnType<typeof startRedisServer>> | undefined;
  let clickhouse: ChdbHttpServer | undefined;
  type RunningRole = { role: Role; name: string; process: ServerProcess; ports: Awaited<ReturnType<typeof freePorts>> };
  const roles: RunningRole[] = [];
  let shared: Record<string, string>;

  /** Starts a role on free ports, or again on the ports it had (a restart behind a balancer). */
  async function startRole(role: Role, name: string, again?: RunningRole) {
    const ports = again?.ports ?? (await freePorts());
    const dataDir = path.join(root, name);
    mkdirSync(dataDir, { recursive: true });
    const child = startProcess(entryPoint(role), { ...shared, ...ports, DATA_DIR: dataDir });
    if (again) again.process = child;
    else roles.push({ role, name, process: child, ports });
    await waitFor(() => child.stdout().includes('ready in') || child.child.exitCode !== null, `the ${name} ready banner`, 90_000);
    if (child.child.exitCode !== null) throw new Error(`${name} exited ${child.child.exitCode}: ${child.stderr()}`);
  }

  beforeAll(async () => {
    const started = Date.now();
    [postgres, redis, clickhouse] = await Promise.all([
      startEmbeddedPostgres({ dataDir: path.join(root, 'postgres') }),
      // Without redis-server the roles share BullMQ's PostgreSQL backend instead; CI installs it.
      startRedisServer({ dir: path.join(root, 'redis') }).catch((error: Error) => {
        if (process.env.CI) throw error;
        process.stderr.write(`scaled-out: ${error.message}; the roles queue on PostgreSQL instead\n`);
        return undefined;
      }),
      startChdbHttpServer(path.join(root, 'clickhouse')),
    ]);
    shared = {
      DATABASE_URL: postgres.url,
      ...(redis ? { REDIS_URL: redis.url } : {}),
      CLICKHOUSE_URL: clickhouse.url,
      CLICKHOUSE_DATABASE: 'spanforge',
      API_KEY_PEPPER: 'scaled-pepper-0123456789abcdef',
      ADMIN_TOKEN: adminToken,
      HOST: '127.0.0.1',
      LOG_LEVEL: 'warn',
    };
    // One process first applies the migrations; the others start together once it is up (the
    // ClickHouse migrator takes no lock: docs/operations.md, "Migrations").
    await startRole('api', 'api');
    await Promise.all([
      startRole('gateway', 'gateway-1'),
      startRole('gateway', 'gateway-2'),
      startRole('worker', 'worker-1'),
      startRole('worker', 'worker-2'),
    ]);
    process.stderr.write(`scaled-out: services and five roles up in ${((Date.now() - started) / 1000).toFixed(1)} s\n`);
  }, 180_000);

  afterAll(async () => {
    await Promise.all(
      roles.map(async ({ process: role }) => {
        if (role.child.exitCode === null && role.child.signalCode === null) role.child.kill('SIGTERM');
        await role.exited;
      }),
    );
    await Promise.all([clickhouse?.stop(), redis?.stop(), postgres?.stop()]);
    rmSync(root, { recursive: true, force: true });
  }, 60_000);

  const apiUrl = () => `http://127.0.0.1:${roles.find((r) => r.role === 'api')!.ports.API_PORT}`;
  const gateways = () => roles.filter((r) => r.role === 'gateway');
  const workers = () => roles.filter((r) => r.role === 'worker');

  let apiKey: string;
  /**
   * Spans of exports a gateway may have taken twice: sent again after a failure, or in flight to a
   * gateway when it was killed (the OTel exporter retries those itself). Stored once, but `usage`
   * meters every export a gateway took.
   */
  let resentSpans = 0;
  /** Spans in exports now in flight, per gateway (gateways() order); exports answered 200 so far. */
  const inFlight = [0, 0];
  let acknowledged = 0;
  /** Every trace sent so far, with what the API must answer for it, computed from its spans. */
  const sent: Array<{ spans: ReadableSpan[]; expected: ReturnType<typeof expectedTrace>; day: string }> = [];
  const ask = async <T>(query: string, variables: Record<string, unknown> = {}) => {
    const result = await graphql<T>(apiUrl(), query, variables, apiKey);
    expect(result.errors).toBeUndefined();
    return result.data!;
  };

  /**
   * Records `count` traces and exports each one half through each gateway, every export at once.
   * With `failover`, an export that fails goes to the other gateway, again until one takes it (what
   * a balancer or the SDK's retry does); the spans of such exports are counted in `resentSpans`,
   * since a gateway may have queued an export it could not answer. An OTel exporter refuses more
   * than 30 exports in flight, so each 10 traces get exporters of their own.
   */
  async function sendTraces(count: number, options: { failover?: boolean; during?: () => boolean } = {}): Promise<void> {
    const exporters: SpanExporter[] = [];
    const exports: Array<Promise<boolean>> = [];
    const deliver = async (pair: SpanExporter[], spans: ReadableSpan[], first: number) => {
      for (let attempt = 0; ; attempt++) {
        const target = (first + attempt) % 2;
        // Sent while a service was down: the gateway may queue it later and still answer an error.
        if (options.during?.()) resentSpans += spans.length;
        inFlight[target] += spans.length;
        const ok = exportSucceeded(await exportSpans(pair[target]!, spans));
        inFlight[target] -= spans.length;
        if (ok) {
          acknowledged++;
          return true;
        }
        if (!options.failover || attempt === 100) return false;
        resentSpans += spans.length;
        await new Promise((r) => setTimeout(r, 100));
      }
    };
    let pair: SpanExporter[] = [];
    for (let n = 0; n < count; n++) {
      if (n % 10 === 0) {
        pair = gateways().map((g) =>
          otlpExporter('http/protobuf', { http: `http://127.0.0.1:${g.ports.OTLP_HTTP_PORT}`, grpc: '' }, apiKey),
        );
        exporters.push(...pair);
      }
      const i = sent.length;
      const recorder = new SpanRecorder('scaled-agent');
      const calls = [MINI, ...(i % 3 === 0 ? [SONNET] : []), ...(i % 2 === 0 ? [{ ...MINI, failed: i % 4 === 0 }] : [])];
      const start = BASE + (i % 2) * DAY + i * 60_000;
      recordAgentTrace(recorder, { session: `scaled-session-${i % SESSIONS}`, calls, start });
      const spans = recorder.finished();
      sent.push({ spans, expected: expectedTrace(spans), day: new Date(start).toISOString().slice(0, 10) });
      const half = Math.ceil(spans.length / 2);
      exports.push(deliver(pair, spans.slice(0, half), 0));
      exports.push(deliver(pair, spans.slice(half), 1));
    }
    expect(await Promise.all(exports)).toEqual(exports.map(() => true));
    await Promise.all(exporters.map((e) => e.shutdown()));
  }

  type Figures = Awaited<ReturnType<typeof readFigures>>;
  const range = { from: new Date(BASE - DAY).toISOString(), to: new Date(BASE + 3 * DAY).toISOString() };
  /** What the API answers: every trace (page by page), the sessions, the daily costs and today's accepted spans. */
  async function readFigures() {
    type TraceNode = { traceId: string; sessionId: string; costUsd: number; inputTokens: number; outputTokens: number; errorCount: number };
    const traces: TraceNode[] = [];
    let after: string | null = null;
    for (;;) {
      const page: { traces: { totalCount: number; nodes: TraceNode[]; pageInfo: { endCursor: string; hasNextPage: boolean } } } = await ask(
        `query($a: String) { traces(first: 100, after: $a) {
          totalCount nodes { traceId sessionId costUsd inputTokens outputTokens errorCount } pageInfo { endCursor hasNextPage } } }`,
        { a: after },
      );
      traces.push(...page.traces.nodes);
      if (!page.traces.pageInfo.hasNextPage) break;
      after = page.traces.pageInfo.endCursor;
    }
    const today = Date.now() - (Date.now() % DAY);
    const data = await ask<{
      sessions: { nodes: Array<{ sessionId: string; traceCount: number; costUsd: number; inputTokens: number; outputTokens: number }> };
      costBreakdown: Array<{ keys: string[]; costUsd: number }>;
      usage: Array<{ spansAccepted: number }>;
    }>(
      `query($f: TraceFilter, $from: DateTime!, $to: DateTime!) {
        sessions(first: 100) { nodes { sessionId traceCount costUsd inputTokens outputTokens } }
        costBreakdown(groupBy: [DAY], filter: $f) { keys costUsd }
        usage(from: $from, to: $to) { spansAccepted } }`,
      { f: range, from: new Date(today - DAY).toISOString(), to: new Date(today + 2 * DAY).toISOString() },
    );
    return {
      traces: traces.sort((a, b) => a.traceId.localeCompare(b.traceId)),
      sessions: [...data.sessions.nodes].sort((a, b) => a.sessionId.localeCompare(b.sessionId)),
      daily: data.costBreakdown.map((r) => ({ day: r.keys[0]!, costUsd: r.costUsd })).sort((a, b) => a.day.localeCompare(b.day)),
      spansAccepted: data.usage.reduce((n, u) => n + u.spansAccepted, 0),
    };
  }

  /** The same figures, computed from the spans sent. */
  function expectedFigures(): Figures {
    const sum = (list: typeof sent, f: (t: (typeof sent)[number]) => number) => list.reduce((s, t) => s + f(t), 0);
    const days = [...new Set(sent.map((t) => t.day))].sort();
    return {
      traces: sent
        .map(({ expected: e }) => ({
          traceId: e.traceId,
          sessionId: e.session,
          costUsd: e.costUsd,
          inputTokens: e.inputTokens,
          outputTokens: e.outputTokens,
          errorCount: e.errorCount,
        }))
        .sort((a, b) => a.traceId.localeCompare(b.traceId)),
      sessions: Array.from({ length: SESSIONS }, (_, s) => {
        const own = sent.filter((t) => t.expected.session === `scaled-session-${s}`);
        return {
          sessionId: `scaled-session-${s}`,
          traceCount: own.length,
          costUsd: sum(own, (t) => t.expected.costUsd),
          inputTokens: sum(own, (t) => t.expected.inputTokens),
          outputTokens: sum(own, (t) => t.expected.outputTokens),
        };
      }),
      daily: days.map((day) => {
        const llm = sent
          .filter((t) => t.day === day)
          .flatMap((t) => t.spans.filter((s) => s.attributes['gen_ai.operation.name'] === 'chat'));
        return { day, costUsd: llm.reduce((s, span) => s + expectedLlmCost(span), 0) };
      }),
      spansAccepted: sum(sent, (t) => t.spans.length),
    };
  }

  /** Waits (at most `timeoutMs`) for the workers' upkeep to settle the figures, then asserts every one. */
  async function expectFiguresAsSent(what: string, timeoutMs: number): Promise<void> {
    // Costs compared to 1e-9 USD (the store sums Float64 in its own order).
    const rounded = (value: unknown) => JSON.stringify(value, (_, v: unknown) => (typeof v === 'number' ? Math.round(v * 1e9) / 1e9 : v));
    const expected = expectedFigures();
    const settling = Date.now();
    let last: Figures | undefined;
    await waitFor(
      async () => {
        last = await readFigures();
        const { spansAccepted, ...figures } = last;
        return rounded(figures) === rounded({ ...expected, spansAccepted: undefined }) && spansAccepted >= expected.spansAccepted;
      },
      'the figures to equal what was sent',
      timeoutMs,
    ).catch(() => undefined);
    process.stderr.write(
      `scaled-out (${what}): ${expected.spansAccepted} spans in ${sent.length} traces settled in ${((Date.now() - settling) / 1000).toFixed(1)} s; ` +
        `usage: ${last?.spansAccepted} accepted (${resentSpans} may have been taken twice)\n`,
    );
    const withoutCost = <T extends { costUsd: number }>(rows: T[]) => rows.map(({ costUsd: _, ...rest }) => rest);
    expect(last!.spansAccepted).toBeGreaterThanOrEqual(expected.spansAccepted);
    expect(last!.spansAccepted).toBeLessThanOrEqual(expected.spansAccepted + resentSpans);
    expect(withoutCost(last!.traces)).toEqual(withoutCost(expected.traces));
    expect(withoutCost(last!.sessions)).toEqual(withoutCost(expected.sessions));
    expect(withoutCost(last!.daily)).toEqual(withoutCost(expected.daily));
    for (const key of ['traces', 'sessions', 'daily'] as const) {
      last![key].forEach((row, i) => expect(row.costUsd).toBeCloseTo(expected[key][i]!.costUsd, 9));
    }
  }

  it('answers every figure as sent, with each trace exported through both gateways at once', async () => {
    const admin = <T>(query: string, variables: Record<string, unknown> = {}) => graphql<T>(apiUrl(), query, variables, adminToken);
    const tenant = await admin<{ createTenant: { id: string } }>('mutation { createTenant(input: { name: "scaled" }) { id } }');
    expect(tenant.errors).toBeUndefined();
    const project = await admin<{ createProject: { id: string } }>(
      'mutation($t: ID!) { createProject(input: { tenantId: $t, name: "scaled" }) { id } }',
      { t: tenant.data!.createTenant.id },
    );
    expect(project.errors).toBeUndefined();
    const key = await admin<{ createApiKey: { secret: string } }>(
      'mutation($p: ID!) { createApiKey(input: { projectId: $p, name: "scaled" }) { secret } }',
      { p: project.data!.createProject.id },
    );
    expect(key.errors).toBeUndefined();
    apiKey = key.data!.createApiKey.secret;

    await sendTraces(TRACES);
    await expectFiguresAsSent('both workers', 60_000);
    // Every span of every trace, once: the trace's own span list.
    for (const { spans, expected } of sent) {
      const { trace } = await ask<{ trace: { spans: Array<{ spanId: string }> } }>(
        'query($id: String!) { trace(traceId: $id) { spans { spanId } } }',
        {
          id: expected.traceId,
        },
      );
      expect(trace.spans.map((s) => s.spanId).sort()).toEqual(spans.map((s) => s.spanContext().spanId).sort());
    }
    for (const { process: role } of roles) expect(role.child.exitCode).toBeNull();
  }, 120_000);

  it('loses nothing and counts nothing twice when a worker is killed mid-job and the other goes on', async () => {
    if (!redis) {
      process.stderr.write("scaled-out: no redis-server, so no way to see the jobs in a worker's hands: the kill test is SKIPPED\n");
      return;
    }
    const [doomed, survivor] = workers();
    // The kill must land while the doomed worker holds jobs. The survivor is paused (SIGSTOP) for
    // the burst, so every active job in Redis is the doomed one's; it is killed as soon as it holds
    // any, and the survivor resumes and must take the orphaned jobs over once their locks lapse.
    const queue = new Redis(redis.url, { maxRetriesPerRequest: 1 });
    try {
      survivor!.process.child.kill('SIGSTOP');
      let held = 0;
      const burst = sendTraces(BURST);
      await waitFor(
        async () => {
          held = await queue.llen('bull:ingest:active');
          return held > 0;
        },
        'the doomed worker to hold jobs',
        30_000,
      );
      doomed!.process.child.kill('SIGKILL');
      survivor!.process.child.kill('SIGCONT');
      await burst;
      await doomed!.process.exited;
      process.stderr.write(`scaled-out: worker killed holding ${held} job(s)\n`);
      expect(held).toBeGreaterThan(0);
      await expectFiguresAsSent('one worker killed', 90_000);
      expect(survivor!.process.child.exitCode).toBeNull();
    } finally {
      if (survivor!.process.child.exitCode === null) survivor!.process.child.kill('SIGCONT');
      queue.disconnect();
    }
  }, 150_000);
  it('loses nothing and counts nothing twice when a gateway is killed and restarted under load', async () => {
    const gateway = gateways()[0]!;
    // Exports go out to both gateways; one is killed (SIGKILL) while they are in flight and comes
    // back on its ports, and what it refused or dropped goes to the other one.
    const burst = sendTraces(BURST, { failover: true });
    const from = acknowledged;
    await waitFor(() => acknowledged - from >= 20 && inFlight[0]! > 0, 'exports answered and in flight', 30_000);
    resentSpans += inFlight[0]!;
    process.stderr.write(`scaled-out: gateway killed with ${inFlight[0]} spans in flight to it\n`);
    gateway.process.child.kill('SIGKILL');
    await gateway.process.exited;
    await startRole('gateway', gateway.name, gateway);
    await burst;
    // The restarted gateway takes exports again.
    const before = resentSpans;
    await sendTraces(TRACES);
    expect(resentSpans).toBe(before);
    await expectFiguresAsSent('a gateway restarted', 90_000);
    for (const { process: role, name } of roles) if (name !== 'worker-1') expect(role.child.exitCode).toBeNull();
  }, 150_000);
  it('loses nothing and counts nothing twice when Redis is restarted under load', async () => {
    if (!redis) {
      process.stderr.write('scaled-out: no redis-server: the Redis restart test is SKIPPED\n');
      return;
    }
    // Redis keeps every acknowledged write in its append-only file (fsync on each), as a queue's
    // Redis must; it is stopped while exports are in flight and started again on its data.
    let outage = false;
    const burst = sendTraces(BURST, { failover: true, during: () => outage });
    const from = acknowledged;
    await waitFor(() => acknowledged - from >= 20, 'exports answered', 30_000);
    resentSpans += inFlight[0]! + inFlight[1]!;
    const { port } = redis;
    outage = true;
    await redis.stop();
    await new Promise((r) => setTimeout(r, 1_000));
    redis = await startRedisServer({ port, dir: path.join(root, 'redis') });
    outage = false;
    await burst;
    await expectFiguresAsSent('Redis restarted', 90_000);
    for (const { process: role, name } of roles) if (name !== 'worker-1') expect(role.child.exitCode).toBeNull();
  }, 150_000);
});
