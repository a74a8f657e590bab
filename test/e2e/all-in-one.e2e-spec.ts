import { chmodSync, mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { entryPoint, freePorts, graphql, postgresPidsFor, startProcess, waitFor, type ServerProcess } from '../support';

/**
 * The newcomer's path as a process: `npm start` on embedded services in a fresh DATA_DIR, then a
 * clean stop, a restart that keeps everything, and a crash (SIGKILL) that must not block the next start.
 */
describe('all-in-one server on embedded services', () => {
  const dataDir = mkdtempSync(path.join(os.tmpdir(), 'spanforge-e2e-'));
  chmodSync(dataDir, 0o755);
  let ports: Awaited<ReturnType<typeof freePorts>>;
  let server: ServerProcess | undefined;
  const api = () => `http://127.0.0.1:${ports.API_PORT}`;

  async function start(): Promise<ServerProcess> {
    const started = startProcess(entryPoint('all-in-one'), { DATA_DIR: dataDir, HOST: '127.0.0.1', LOG_LEVEL: 'info', ...ports });
    await waitFor(() => started.stdout().includes('ready in') || started.child.exitCode !== null, 'the ready banner');
    if (started.child.exitCode !== null) throw new Error(`server exited: ${started.stderr()}`);
    return started;
  }

  async function stop(process: ServerProcess, signal: NodeJS.Signals = 'SIGTERM'): Promise<number | null> {
    process.child.kill(signal);
    return process.exited;
  }

  beforeAll(async () => {
    ports = await freePorts();
  });
  afterAll(async () => {
    if (server && server.child.exitCode === null) await stop(server);
    // A failed crash test could leave an orphaned postgres: never leave one behind.
    for (const pid of await postgresPidsFor(dataDir)) process.kill(pid, 'SIGINT');
    rmSync(dataDir, { recursive: true, force: true });
  });

  let adminToken: string;
  let developmentKey: string;
  let tenantId: string;
  let developmentProjectId: string;

  it('prints paste-ready credentials on first start and is ready on both ports', async () => {
    server = await start();
    const out = server.stdout();
    adminToken = /^ADMIN_TOKEN=(\S+)$/m.exec(out)![1]!;
    expect(out).toContain(`OTEL_EXPORTER_OTLP_ENDPOINT=http://localhost:${ports.OTLP_HTTP_PORT}`);
    developmentKey = decodeURIComponent(/^OTEL_EXPORTER_OTLP_HEADERS=authorization=(\S+)$/m.exec(out)![1]!).replace(/^Bearer /, '');
    expect(out).toContain(`GraphQL    http://localhost:${ports.API_PORT}/graphql`);
    expect(out).toContain(`OTLP/gRPC  localhost:${ports.OTLP_GRPC_PORT}`);
    // A clean start says nothing on stderr: no framework warnings for an operator to puzzle over.
    expect(server.stderr()).not.toMatch(/Warning|FSTWRN|DeprecationWarning/);
    for (const port of [ports.API_PORT, ports.OTLP_HTTP_PORT]) {
      expect((await fetch(`http://127.0.0.1:${port}/readyz`)).status).toBe(200);
      expect((await fetch(`http://127.0.0.1:${port}/healthz`)).status).toBe(200);
    }
    const project = await graphql<{ currentProject: { id: string } }>(api(), '{ currentProject { id } }', {}, developmentKey);
    developmentProjectId = project.data!.currentProject.id;
    const tenant = await graphql<{ createTenant: { id: string } }>(
      api(),
      'mutation { createTenant(input: { name: "survivor" }) { id } }',
      {},
      adminToken,
    );
    tenantId = tenant.data!.createTenant.id;
    expect(tenantId).toMatch(/^[0-9a-f-]{36}$/);
  });

  it('stops cleanly on SIGTERM and leaves no PostgreSQL behind', async () => {
    expect(await stop(server!)).toBe(0);
    expect(server!.stderr()).toContain('stopped in');
    expect(await postgresPidsFor(dataDir)).toEqual([]);
  });

  it('keeps every credential, tenant and migration across a restart', async () => {
    server = await start();
    const out = server.stdout();
    expect(out).not.toContain('ADMIN_TOKEN=');
    expect(out).toContain(`Credentials: admin token and development API key are in ${path.join(dataDir, 'credentials.json')}`);
    expect(server.stderr()).not.toContain('migrations applied');
    const project = await graphql<{ currentProject: { id: string } }>(api(), '{ currentProject { id } }', {}, developmentKey);
    expect(project.data!.currentProject.id).toBe(developmentProjectId);
    const created = await graphql<{ createProject: { tenantId: string } }>(
      api(),
      'mutation($t: ID!) { createProject(input: { tenantId: $t, name: "after-restart" }) { tenantId } }',
      { t: tenantId },
      adminToken,
    );
    expect(created.data!.createProject.tenantId).toBe(tenantId);
  });

  it('starts again after a crash that left PostgreSQL and its lock file behind', async () => {
    await stop(server!, 'SIGKILL');
    expect((await postgresPidsFor(dataDir)).length).toBeGreaterThan(0);
    server = await start();
    expect((await fetch(`${api()}/readyz`)).status).toBe(200);
    const project = await graphql<{ currentProject: { id: string } }>(api(), '{ currentProject { id } }', {}, developmentKey);
    expect(project.data!.currentProject.id).toBe(developmentProjectId);
  });

  it('refuses a second server on the same DATA_DIR, and the first keeps running', async () => {
    const second = startProcess(entryPoint('all-in-one'), {
      DATA_DIR: dataDir,
      HOST: '127.0.0.1',
      LOG_LEVEL: 'info',
      ...(await freePorts()),
    });
    expect(await second.exited).toBe(1);
    expect(second.stderr()).toContain(`DATA_DIR ${dataDir} is in use by another spanforge process (pid ${server!.child.pid})`);
    // A refusal says what to do; a stack trace would only bury it.
    expect(second.stderr()).not.toMatch(/^\s+at /m);
    // Its PostgreSQL was not taken for an orphan and stopped.
    expect((await fetch(`${api()}/readyz`)).status).toBe(200);
    const project = await graphql<{ currentProject: { id: string } }>(api(), '{ currentProject { id } }', {}, developmentKey);
    expect(project.data!.currentProject.id).toBe(developmentProjectId);
  });
});

describe('refusing to start', () => {
  it('lists every bad variable at once and exits 1', async () => {
    const server = startProcess(entryPoint('all-in-one'), { API_PORT: 'http', OTLP_MAX_BODY_BYTES: 'lots', REDIS_URL: 'memcached://x' });
    expect(await server.exited).toBe(1);
    expect(server.stderr()).toMatch(/3 problems[\s\S]*API_PORT[\s\S]*REDIS_URL[\s\S]*OTLP_MAX_BODY_BYTES/);
  });

  it.each(['gateway', 'worker', 'api'] as const)('the %s role without external services says what it needs', async (role) => {
    const server = startProcess(entryPoint(role), {});
    expect(await server.exited).toBe(1);
    expect(server.stderr()).toContain(`the ${role} role needs DATABASE_URL`);
    expect(server.stderr()).toContain('CLICKHOUSE_URL');
  });
});
