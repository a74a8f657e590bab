import { graphql } from '../support';
import { startIngestHarness, type IngestHarness } from './ingest-harness';

const ADMIN = 'test-admin-token-0123456789';

describe('admin API (GraphQL: tenants, projects, keys)', () => {
  let h: IngestHarness;
  let url: string;

  beforeAll(async () => {
    h = await startIngestHarness({ ADMIN_TOKEN: ADMIN });
    url = h.api;
  });
  afterAll(() => h?.stop());

  const CREATE_TENANT = 'mutation($name: String!) { createTenant(input: { name: $name }) { id name projects { id name } } }';

  it('creates a tenant with a "default" project, more projects, and keys shown once', async () => {
    const tenant = await graphql<{ createTenant: { id: string; name: string; projects: Array<{ id: string; name: string }> } }>(
      url,
      CREATE_TENANT,
      { name: 'Acme' },
      ADMIN,
    );
    expect(tenant.errors).toBeUndefined();
    expect(tenant.data!.createTenant.name).toBe('Acme');
    expect(tenant.data!.createTenant.projects.map((p) => p.name)).toEqual(['default']);

    const project = await graphql<{ createProject: { id: string; name: string } }>(
      url,
      'mutation($t: ID!) { createProject(input: { tenantId: $t, name: "checkout-agent" }) { id name } }',
      { t: tenant.data!.createTenant.id },
      ADMIN,
    );
    expect(project.data!.createProject.name).toBe('checkout-agent');

    const key = await graphql<{
      createApiKey: { secret: string; apiKey: { id: string; prefix: string; createdAt: string; revokedAt: string | null } };
    }>(
      url,
      'mutation($p: ID!) { createApiKey(input: { projectId: $p, name: "prod" }) { secret apiKey { id prefix createdAt revokedAt } } }',
      { p: project.data!.createProject.id },
      ADMIN,
    );
    const { secret, apiKey } = key.data!.createApiKey;
    expect(secret.startsWith(`${apiKey.prefix}_`)).toBe(true);
    expect(apiKey.createdAt).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z$/);
    expect(apiKey.revokedAt).toBeNull();

    const whoami = await graphql<{ currentProject: { id: string; name: string } }>(url, '{ currentProject { id name } }', {}, secret);
    expect(whoami.data!.currentProject).toEqual(project.data!.createProject);

    const revoked = await graphql<{ revokeApiKey: { id: string; revokedAt: string } }>(
      url,
      'mutation($id: ID!) { revokeApiKey(id: $id) { id revokedAt } }',
      { id: apiKey.id },
      ADMIN,
    );
    expect(revoked.data!.revokeApiKey.revokedAt).toMatch(/Z$/);
    const refused = await graphql(url, '{ currentProject { id } }', {}, secret);
    expect(refused.data).toBeNull();
    expect(refused.errors![0]!.extensions!.code).toBe('UNAUTHENTICATED');
  });

  it("lists tenants with their projects, and a project's keys with their prefixes, to the admin only", async () => {
    const { tenant, project } = await h.services.tenancy.createTenant('Listed');
    const extra = await h.services.tenancy.createProject(tenant.id, 'support-bot');
    const first = await h.services.tenancy.createApiKey(project.id, 'ci');
    const second = await h.services.tenancy.createApiKey(project.id, 'prod');
    await h.services.tenancy.revokeApiKey(first.apiKey.id);
    const listed = await graphql<{ tenants: Array<{ id: string; name: string; projects: Array<{ id: string; name: string }> }> }>(
      url,
      '{ tenants { id name projects { id name } } }',
      {},
      ADMIN,
    );
    expect(listed.errors).toBeUndefined();
    expect(listed.data!.tenants.find((t) => t.id === tenant.id)).toEqual({
      id: tenant.id,
      name: 'Listed',
      projects: [
        { id: project.id, name: 'default' },
        { id: extra.id, name: 'support-bot' },
      ],
    });
    const keys = await graphql<{ apiKeys: Array<{ id: string; name: string; prefix: string; revokedAt: string | null }> }>(
      url,
      'query($p: ID!) { apiKeys(projectId: $p) { id name prefix revokedAt } }',
      { p: project.id },
      ADMIN,
    );
    expect(keys.errors).toBeUndefined();
    expect(keys.data!.apiKeys.map((k) => [k.id, k.name, k.revokedAt === null])).toEqual([
      [second.apiKey.id, 'prod', true],
      [first.apiKey.id, 'ci', false],
    ]);
    for (const [key, made] of [
      [keys.data!.apiKeys[0]!, second],
      [keys.data!.apiKeys[1]!, first],
    ] as const)
      expect(made.secret.startsWith(`${key.prefix}_`)).toBe(true);
    // Never the secrets, and not for a project key.
    expect(JSON.stringify(keys)).not.toContain(first.secret);
    expect(JSON.stringify(keys)).not.toContain(second.secret);
    expect((await graphql(url, '{ tenants { id } }', {}, second.secret)).errors![0]!.extensions!.code).toBe('FORBIDDEN');
    expect(
      (await graphql(url, 'query($p: ID!) { apiKeys(projectId: $p) { id } }', { p: project.id }, second.secret)).errors![0]!.extensions!
        .code,
    ).toBe('FORBIDDEN');
    const unknown = await graphql(url, '{ apiKeys(projectId: "00000000-0000-0000-0000-000000000000") { id } }', {}, ADMIN);
    expect(unknown.errors![0]!.extensions!.code).toBe('NOT_FOUND');
  });

  it.each([
    ['no token', undefined],
    ['a wrong token', 'wrong-token-wrong-token'],
    ['an almost-right token', ADMIN.slice(0, -1)],
  ])('refuses admin mutations with %s, saying nothing more', async (_, bearer) => {
    const result = await graphql(url, CREATE_TENANT, { name: 'Intruder' }, bearer);
    expect(result.data).toBeNull();
    expect(result.errors).toHaveLength(1);
    expect(result.errors![0]!.extensions!.code).toBe('UNAUTHENTICATED');
    // Refused before the document is read: it cannot say what the document wanted.
    expect(result.errors![0]!.message).toBe('a valid project API key or the admin token is required');
    expect(JSON.stringify(result)).not.toContain(ADMIN);
  });

  it('refuses a project API key as an admin token: FORBIDDEN, the key is known but has not the right', async () => {
    const { project } = await h.services.tenancy.createTenant('key-holder');
    const { secret } = await h.services.tenancy.createApiKey(project.id);
    const result = await graphql(url, CREATE_TENANT, { name: 'Escalation' }, secret);
    expect(result.data).toBeNull();
    expect(result.errors![0]!.extensions!.code).toBe('FORBIDDEN');
    expect(result.errors![0]!.message).toMatch(/admin token required/);
    const { rows } = await h.services.pg.query<{ n: string }>("SELECT count(*) AS n FROM tenants WHERE name = 'Escalation'");
    expect(Number(rows[0]!.n)).toBe(0);
  });

  it("sets and reads a project's ingest limits, to the admin only: a field given changes, an absent one stays, null is the default", async () => {
    const { project } = await h.services.tenancy.createTenant('Throttled');
    const { secret } = await h.services.tenancy.createApiKey(project.id);
    const SET = 'mutation($i: IngestLimitsInput!) { setIngestLimits(input: $i) { projectId spansPerSecond bytesPerSecond } }';
    const GET = 'query($p: ID!) { ingestLimits(projectId: $p) { projectId spansPerSecond bytesPerSecond } }';
    const read = async () => (await graphql<{ ingestLimits: unknown }>(url, GET, { p: project.id }, ADMIN)).data!.ingestLimits;
    expect(await read()).toEqual({ projectId: project.id, spansPerSecond: null, bytesPerSecond: null });
    const set = await graphql(url, SET, { i: { projectId: project.id, spansPerSecond: 200, bytesPerSecond: 5 * 2 ** 30 } }, ADMIN);
    expect(set.errors).toBeUndefined();
    expect(set.data).toEqual({ setIngestLimits: { projectId: project.id, spansPerSecond: 200, bytesPerSecond: 5 * 2 ** 30 } });
    expect(await read()).toEqual({ projectId: project.id, spansPerSecond: 200, bytesPerSecond: 5 * 2 ** 30 });
    // What the gateway reads.
    expect(await h.services.tenancy.ingestLimits(project.id)).toEqual({ spansPerSecond: 200, bytesPerSecond: 5 * 2 ** 30 });
    // Not for a project key, and nothing changed by trying.
    expect((await graphql(url, SET, { i: { projectId: project.id, spansPerSecond: 1 } }, secret)).errors![0]!.extensions!.code).toBe(
      'FORBIDDEN',
    );
    expect((await graphql(url, GET, { p: project.id }, secret)).errors![0]!.extensions!.code).toBe('FORBIDDEN');
    // Every bad value named at once; an unknown project is NOT_FOUND.
    const bad = await graphql(url, SET, { i: { projectId: project.id, spansPerSecond: 0, bytesPerSecond: -1 } }, ADMIN);
    expect(bad.errors![0]!.extensions!.code).toBe('BAD_USER_INPUT');
    expect(bad.errors![0]!.message).toMatch(
      /spansPerSecond must be an integer from 1 to 2147483647.*bytesPerSecond must be an integer from 1/,
    );
    expect(await read()).toEqual({ projectId: project.id, spansPerSecond: 200, bytesPerSecond: 5 * 2 ** 30 });
    const unknown = await graphql(url, SET, { i: { projectId: '00000000-0000-0000-0000-000000000000', spansPerSecond: 5 } }, ADMIN);
    expect(unknown.errors![0]!.extensions!.code).toBe('NOT_FOUND');
    expect((await graphql(url, GET, { p: 'not-a-project' }, ADMIN)).errors![0]!.extensions!.code).toBe('NOT_FOUND');
    // An absent field keeps its limit; null puts it back to the default.
    expect((await graphql(url, SET, { i: { projectId: project.id, spansPerSecond: 300 } }, ADMIN)).data).toEqual({
      setIngestLimits: { projectId: project.id, spansPerSecond: 300, bytesPerSecond: 5 * 2 ** 30 },
    });
    expect((await graphql(url, SET, { i: { projectId: project.id, bytesPerSecond: null } }, ADMIN)).data).toEqual({
      setIngestLimits: { projectId: project.id, spansPerSecond: 300, bytesPerSecond: null },
    });
    expect((await graphql(url, SET, { i: { projectId: project.id, spansPerSecond: null } }, ADMIN)).data).toEqual({
      setIngestLimits: { projectId: project.id, spansPerSecond: null, bytesPerSecond: null },
    });
  });

  it('answers bad input with a specific error', async () => {
    const empty = await graphql(url, CREATE_TENANT, { name: '   ' }, ADMIN);
    expect(empty.errors![0]).toMatchObject({ message: 'tenant name must not be empty', extensions: { code: 'BAD_USER_INPUT' } });
    const unknown = await graphql(
      url,
      'mutation { createProject(input: { tenantId: "00000000-0000-0000-0000-000000000000", name: "x" }) { id } }',
      {},
      ADMIN,
    );
    expect(unknown.errors![0]).toMatchObject({ extensions: { code: 'NOT_FOUND' } });
    const junkId = await graphql(url, 'mutation { revokeApiKey(id: "1; DROP TABLE api_keys") { id } }', {}, ADMIN);
    expect(junkId.errors![0]).toMatchObject({ extensions: { code: 'NOT_FOUND' } });
    const invalid = await graphql(url, '{ noSuchField }', {}, ADMIN);
    expect(invalid.errors![0]).toMatchObject({ message: expect.stringContaining('noSuchField'), extensions: { code: 'BAD_USER_INPUT' } });
  });

  it('serves /healthz, /readyz and /metrics', async () => {
    expect((await fetch(`${url}/healthz`)).status).toBe(200);
    const ready = await fetch(`${url}/readyz`);
    expect(ready.status).toBe(200);
    expect(await ready.json()).toMatchObject({
      ready: true,
      checks: { postgres: { ok: true }, clickhouse: { ok: true }, queue: { ok: true } },
    });
    // A project's read takes its turn at ClickHouse; the statement metrics say in which lane.
    const { apiKey } = await h.newProject('metrics');
    const traces = await graphql(url, '{ traces(first: 1) { nodes { traceId } } }', {}, apiKey);
    expect(traces.errors).toBeUndefined();
    const metrics = await fetch(`${url}/metrics`);
    expect(metrics.headers.get('content-type')).toContain('text/plain');
    const exposed = await metrics.text();
    expect(exposed).toContain('spanforge_process_cpu_user_seconds_total');
    expect(exposed).toMatch(/^spanforge_clickhouse_statement_seconds_count\{participant="project",lane="main"\} [1-9]/m);
    expect(exposed).toMatch(/^spanforge_clickhouse_statement_wait_seconds_count\{participant="project",lane="main"\} [1-9]/m);
    // The API's address itself says where things are, instead of a 404.
    const index = await fetch(`${url}/`);
    expect(index.status).toBe(200);
    expect(await index.json()).toMatchObject({
      graphql: expect.stringContaining('POST /graphql'),
      otlp: expect.stringContaining(`:${h.services.config.ports.otlpHttp}/v1/traces`),
    });
  });
});
