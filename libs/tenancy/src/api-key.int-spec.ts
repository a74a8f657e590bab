import { createPostgresPool, migratePostgres } from '@spanforge/postgres';
import { projectRoot } from '@spanforge/config';
import path from 'node:path';
import type { Pool } from 'pg';
import { testDatabaseUrl } from '@spanforge/testing';
import { ApiKeyScope } from './tenancy.model';
import { ApiKeyVerifier } from './api-key.verifier';
import { TenancyRepository } from './tenancy.repository';
import { TenancyService } from './tenancy.service';

const PEPPER = 'integration-pepper-0123456789';

describe('API keys', () => {
  let pool: Pool;
  let repository: TenancyRepository;
  let service: TenancyService;
  const verifiers: ApiKeyVerifier[] = [];

  /** Each verifier stands for one process: its own cache and its own LISTEN connection. */
  async function processVerifier(): Promise<ApiKeyVerifier> {
    const verifier = new ApiKeyVerifier(new TenancyRepository(pool), { databaseUrl: testDatabaseUrl(), pepper: PEPPER, ttlMs: 60_000 });
    await verifier.start();
    verifiers.push(verifier);
    return verifier;
  }

  beforeAll(async () => {
    pool = createPostgresPool(testDatabaseUrl(), 4);
    await migratePostgres(pool, path.join(projectRoot(), 'infra', 'postgres'));
    repository = new TenancyRepository(pool);
    service = new TenancyService(repository, PEPPER);
  });
  afterAll(async () => {
    await Promise.all(verifiers.map((v) => v.close()));
    await pool.end();
  });

  async function newKey() {
    const { tenant, project } = await service.createTenant(`tenant ${Math.random()}`);
    const created = await service.createApiKey(project.id, 'ci');
    return { tenant, project, ...created };
  }

  it('verify to their own project and tenant', async () => {
    const { tenant, project, secret, apiKey } = await newKey();
    const verifier = await processVerifier();
    // A key made without scopes may do everything in its project.
    expect(await verifier.verify(secret)).toEqual({
      tenantId: tenant.id,
      projectId: project.id,
      apiKeyId: apiKey.id,
      scopes: ['INGEST', 'READ', 'MANAGE'],
    });
    expect({ scopes: apiKey.scopes, expiresAt: apiKey.expiresAt }).toEqual({ scopes: ['INGEST', 'READ', 'MANAGE'], expiresAt: null });
    expect(apiKey.prefix).toBe(secret.slice(0, apiKey.prefix.length));
  });

  it('refuse a secret that differs from the stored hash, and junk', async () => {
    const { secret } = await newKey();
    const verifier = await processVerifier();
    const tampered = secret.slice(0, -1) + (secret.endsWith('A') ? 'B' : 'A');
    expect(await verifier.verify(tampered)).toBeUndefined();
    expect(await verifier.verify(undefined)).toBeUndefined();
    expect(await verifier.verify("sf_000000000000_' OR '1'='1")).toBeUndefined();
  });

  it('are stored only as salted hashes', async () => {
    const { secret, apiKey } = await newKey();
    const { rows } = await pool.query('SELECT row_to_json(k)::text AS row FROM api_keys k WHERE id = $1', [apiKey.id]);
    const stored: string = rows[0].row;
    // The random part is base64url, which may itself contain '_': everything after `sf_<lookup>_`.
    const randomPart = secret.slice('sf_'.length + 12 + 1);
    expect(randomPart).toHaveLength(43);
    expect(stored).not.toContain(randomPart);
    expect(stored).not.toContain(Buffer.from(randomPart, 'base64url').toString('hex'));
  });

  it('once revoked are refused by every process within 1 s', async () => {
    const { secret, apiKey } = await newKey();
    const other = await processVerifier();
    const same = await processVerifier();
    // Both caches hold the key as valid before the revocation.
    expect(await other.verify(secret)).toBeDefined();
    expect(await same.verify(secret)).toBeDefined();

    const revokedAt = performance.now();
    const revoking = new TenancyService(repository, PEPPER, same);
    const revoked = await revoking.revokeApiKey(apiKey.id);
    expect(revoked.revokedAt).toBeInstanceOf(Date);
    expect(await same.verify(secret)).toBeUndefined();

    let refusedAfterMs: number | undefined;
    while (performance.now() - revokedAt < 2_000) {
      if ((await other.verify(secret)) === undefined) {
        refusedAfterMs = performance.now() - revokedAt;
        break;
      }
      await new Promise((r) => setTimeout(r, 10));
    }
    expect(refusedAfterMs).toBeDefined();
    expect(refusedAfterMs!).toBeLessThan(1_000);
    // And a fresh process never accepts it.
    expect(await (await processVerifier()).verify(secret)).toBeUndefined();
  });

  it('record last use at most once a minute', async () => {
    const { secret, apiKey } = await newKey();
    const verifier = await processVerifier();
    const lastUsed = async () =>
      (await pool.query('SELECT last_used_at FROM api_keys WHERE id = $1', [apiKey.id])).rows[0].last_used_at as Date | null;
    expect(await lastUsed()).toBeNull();
    await verifier.verify(secret);
    let first: Date | null = null;
    for (let i = 0; i < 50 && !first; i++) {
      first = await lastUsed();
      await new Promise((r) => setTimeout(r, 20));
    }
    expect(first).toBeInstanceOf(Date);
    // Many more uses from this and another process within the minute leave it unchanged.
    const another = await processVerifier();
    for (let i = 0; i < 20; i++) {
      await verifier.verify(secret);
      await another.verify(secret);
    }
    await new Promise((r) => setTimeout(r, 100));
    expect((await lastUsed())?.getTime()).toBe(first!.getTime());
  });

  it('are refused for a project that does not exist', async () => {
    await expect(service.createApiKey('00000000-0000-0000-0000-000000000000')).rejects.toThrow(/no project/);
    await expect(service.createApiKey('not-a-uuid')).rejects.toThrow(/no project/);
  });

  it('carry the scopes they were made with', async () => {
    const { project } = await service.createTenant(`tenant ${Math.random()}`);
    const { secret, apiKey } = await service.createApiKey(project.id, 'exporter', { scopes: [ApiKeyScope.INGEST, ApiKeyScope.INGEST] });
    expect(apiKey.scopes).toEqual([ApiKeyScope.INGEST]);
    expect((await (await processVerifier()).verify(secret))?.scopes).toEqual([ApiKeyScope.INGEST]);
    expect((await service.apiKeysOf(project.id)).map((k) => k.scopes)).toEqual([[ApiKeyScope.INGEST]]);
    await expect(service.createApiKey(project.id, 'none', { scopes: [] })).rejects.toThrow(/scopes must name at least one/);
  });

  it('stop working when they expire, even from a warm cache', async () => {
    const { project } = await service.createTenant(`tenant ${Math.random()}`);
    const expiresAt = new Date(Date.now() + 1_500);
    const { secret, apiKey } = await service.createApiKey(project.id, 'short', { expiresAt });
    expect(apiKey.expiresAt?.getTime()).toBe(expiresAt.getTime());
    const verifier = await processVerifier();
    expect(await verifier.verify(secret)).toBeDefined();
    await new Promise((resolve) => setTimeout(resolve, expiresAt.getTime() - Date.now() + 50));
    expect(await verifier.verify(secret)).toBeUndefined();
    expect(await (await processVerifier()).verify(secret)).toBeUndefined();
    await expect(service.createApiKey(project.id, 'past', { expiresAt: new Date(Date.now() - 1_000) })).rejects.toThrow(
      /expiresAt must be in the future/,
    );
  });

  it('were all-scope when made before scopes existed', async () => {
    const { project } = await service.createTenant(`tenant ${Math.random()}`);
    const { apiKey } = await service.createApiKey(project.id, 'old');
    // A row as 001 wrote it gets the column's default: the migration gave every existing key all three.
    const { rows } = await pool.query<{ scopes: string[] }>(
      "SELECT column_default AS scopes FROM information_schema.columns WHERE table_name = 'api_keys' AND column_name = 'scopes'",
    );
    expect(rows[0]!.scopes).toMatch(/INGEST.*READ.*MANAGE/);
    expect(apiKey.scopes).toEqual(['INGEST', 'READ', 'MANAGE']);
  });

  it('say when the revocation channel is lost and when it is back, and bypass the cache meanwhile', async () => {
    const lines: string[] = [];
    const log = {
      warn: (m: string) => lines.push(`WARN ${m}`),
      error: (m: string) => lines.push(`ERROR ${m}`),
      info: (m: string) => lines.push(`INFO ${m}`),
    };
    const listeners = async () =>
      (await pool.query<{ pid: number }>("SELECT pid FROM pg_stat_activity WHERE application_name = 'spanforge-key-revocations'")).rows.map(
        (r) => r.pid,
      );
    const before = new Set(await listeners());
    const verifier = new ApiKeyVerifier(new TenancyRepository(pool), { databaseUrl: testDatabaseUrl(), pepper: PEPPER, log });
    await verifier.start();
    verifiers.push(verifier);
    const mine = (await listeners()).filter((pid) => !before.has(pid));
    expect(mine).toHaveLength(1);
    await pool.query('SELECT pg_terminate_backend($1)', [mine[0]]);
    const waitFor = async (done: () => boolean) => {
      for (let i = 0; i < 150 && !done(); i++) await new Promise((resolve) => setTimeout(resolve, 20));
    };
    await waitFor(() => !verifier.isListening);
    expect(verifier.isListening).toBe(false);
    await waitFor(() => verifier.isListening);
    expect(verifier.isListening).toBe(true);
    expect(lines).toEqual([
      expect.stringMatching(
        /^WARN API key revocation channel lost \(terminating connection due to administrator command.*\); verifying against PostgreSQL until it is back$/,
      ),
      'INFO API key revocation channel is back; caching verified keys again',
    ]);
  });
  it('keep a valid key cached through a flood of unknown ones', async () => {
    const { secret } = await newKey();
    const lookups = new TenancyRepository(pool);
    let reads = 0;
    const find = lookups.findKeyByLookupId.bind(lookups);
    lookups.findKeyByLookupId = async (lookupId: string) => {
      reads++;
      return find(lookupId);
    };
    const verifier = new ApiKeyVerifier(lookups, { databaseUrl: testDatabaseUrl(), pepper: PEPPER, maxEntries: 5 });
    await verifier.start();
    verifiers.push(verifier);
    expect(await verifier.verify(secret)).toBeDefined();
    for (let i = 0; i < 50; i++) expect(await verifier.verify(`sf_${i.toString(16).padStart(12, '0')}_${'y'.repeat(43)}`)).toBeUndefined();
    const before = reads;
    expect(await verifier.verify(secret)).toBeDefined();
    expect(reads).toBe(before);
  });
});

describe('project names', () => {
  let pool: Pool;
  let service: TenancyService;
  beforeAll(async () => {
    pool = createPostgresPool(testDatabaseUrl(), 2);
    await migratePostgres(pool, path.join(projectRoot(), 'infra', 'postgres'));
    service = new TenancyService(new TenancyRepository(pool), PEPPER);
  });
  afterAll(async () => pool.end());

  it('are unique per tenant: a second one is refused by the constraint, with the name', async () => {
    const { tenant } = await service.createTenant(`tenant ${Math.random()}`);
    await expect(service.createProject(tenant.id, 'support-bot')).resolves.toMatchObject({ name: 'support-bot' });
    await expect(service.createProject(tenant.id, ' support-bot')).rejects.toThrow('the tenant already has a project named "support-bot"');
    await expect(service.createProject(tenant.id, 'default')).rejects.toThrow('the tenant already has a project named "default"');
    const other = await service.createTenant(`tenant ${Math.random()}`);
    await expect(service.createProject(other.tenant.id, 'support-bot')).resolves.toMatchObject({ tenantId: other.tenant.id });
  });

  it('are refused for a tenant that does not exist, whatever the id looks like', async () => {
    await expect(service.createProject('00000000-0000-0000-0000-000000000000', 'x')).rejects.toThrow(/no tenant with id/);
    await expect(service.createProject('not-a-uuid', 'x')).rejects.toThrow(/no tenant with id/);
  });

  it('do not hide a database failure as "free" or "taken"', async () => {
    const broken = createPostgresPool('postgres://nobody:wrong@127.0.0.1:1/none', 1);
    try {
      const unreachable = new TenancyService(new TenancyRepository(broken), PEPPER);
      await expect(unreachable.createProject('00000000-0000-0000-0000-000000000000', 'x')).rejects.toThrow(/ECONNREFUSED/);
    } finally {
      await broken.end();
    }
  });
});
