import type { Pool, PoolClient } from 'pg';
import { checkOut, reasonOf, stderrLog, type ErrorLog } from '@spanforge/postgres';
import { displayPrefix } from './api-key.secret';
import type { ApiKey, ApiKeyScope, Project, Tenant } from './tenancy.model';

/** PostgreSQL channel on which revocations reach every process's key cache. */
export const KEY_REVOKED_CHANNEL = 'spanforge_api_key_revoked';

interface ApiKeyRow {
  id: string;
  tenant_id: string;
  project_id: string;
  name: string | null;
  lookup_id: string;
  scopes: string[];
  created_at: Date;
  expires_at: Date | null;
  revoked_at: Date | null;
  last_used_at: Date | null;
}

const PRICE_COLUMNS =
  'id, project_id, model, input_per_mtok, output_per_mtok, cache_read_per_mtok, cache_write_per_mtok, effective_from, created_at';

export interface PriceOverrideRow {
  id: string;
  project_id: string;
  created_at: Date;
  model: string;
  input_per_mtok: number;
  output_per_mtok: number;
  cache_read_per_mtok: number | null;
  cache_write_per_mtok: number | null;
  effective_from: Date;
}

export interface StoredKey extends ApiKey {
  salt: Buffer;
  hash: Buffer;
}

const KEY_COLUMNS = 'id, tenant_id, project_id, name, lookup_id, scopes, created_at, expires_at, revoked_at, last_used_at';

function toApiKey(row: ApiKeyRow): ApiKey {
  return {
    id: row.id,
    tenantId: row.tenant_id,
    projectId: row.project_id,
    name: row.name,
    prefix: displayPrefix(row.lookup_id),
    scopes: row.scopes as ApiKeyScope[],
    createdAt: row.created_at,
    expiresAt: row.expires_at,
    revokedAt: row.revoked_at,
    lastUsedAt: row.last_used_at,
  };
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
/** Ids come from users; anything that is not a UUID cannot exist, so it is not sent to SQL. */
export const isUuid = (id: string) => UUID.test(id);

/** A tenants row as read (bigint arrives as text). */
interface TenantRow {
  id: string;
  name: string;
  created_at: Date;
  monthly_spans: string | null;
}

const TENANT_COLUMNS = 'id, name, created_at, monthly_spans';

const toTenant = (r: TenantRow): Tenant => ({
  id: r.id,
  name: r.name,
  createdAt: r.created_at,
  monthlySpans: r.monthly_spans === null ? null : Number(r.monthly_spans),
});

interface ProjectRow {
  id: string;
  tenant_id: string;
  name: string;
  created_at: Date;
}

const toProject = (r: ProjectRow): Project => ({ id: r.id, tenantId: r.tenant_id, name: r.name, createdAt: r.created_at });

/** The ingest limit columns (bigint arrives as text). */
interface LimitsRow {
  s: number | null;
  b: string | null;
}

const toLimits = (r: LimitsRow): ProjectIngestLimits => ({ spansPerSecond: r.s, bytesPerSecond: r.b == null ? null : Number(r.b) });

/** What gateways allow a project that has no limits of its own: generous, a project hitting them is almost certainly misbehaving. */
export const DEFAULT_PROJECT_INGEST_LIMITS: Readonly<{ spansPerSecond: number; bytesPerSecond: number }> = Object.freeze({
  spansPerSecond: 50_000,
  bytesPerSecond: 64 * 1024 * 1024,
});

/** A project's own ingest limits; null means the gateway's default (DEFAULT_PROJECT_INGEST_LIMITS). */
export interface ProjectIngestLimits {
  spansPerSecond: number | null;
  bytesPerSecond: number | null;
}

/** PostgreSQL's SQLSTATE unique_violation: the only error that means "this name (or key) is taken". */
export const UNIQUE_VIOLATION = '23505';

/** True only for PostgreSQL's unique_violation (optionally on one constraint); any other error is a failure, not an answer. */
export function isUniqueViolation(error: unknown, constraint?: string): boolean {
  const e = error as { code?: unknown; constraint?: unknown } | null;
  return e?.code === UNIQUE_VIOLATION && (constraint === undefined || e.constraint === constraint);
}

/** The constraint that makes a project name unique within its tenant (infra/postgres/001_tenancy.sql). */
export const PROJECT_NAME_CONSTRAINT = 'projects_tenant_id_name_key';

/** Owns all tenancy SQL. */
export class TenancyRepository {
  constructor(
    private readonly pool: Pool,
    private readonly log: ErrorLog = stderrLog('tenancy'),
  ) {}

  async createTenantWithProject(tenantName: string, projectName: string): Promise<{ tenant: Tenant; project: Project }> {
    return this.transaction(async (client) => {
      const tenant = await client.query<TenantRow>(`INSERT INTO tenants (name) VALUES ($1) RETURNING ${TENANT_COLUMNS}`, [tenantName]);
      const t = toTenant(tenant.rows[0]!);
      const project = await this.insertProject(client, t.id, projectName);
      return { tenant: t, project };
    });
  }

  async createProject(tenantId: string, name: string): Promise<Project | undefined> {
    if (!isUuid(tenantId)) return undefined;
    const exists = await this.pool.query('SELECT 1 FROM tenants WHERE id = $1', [tenantId]);
    if (exists.rowCount === 0) return undefined;
    return this.insertProject(this.pool, tenantId, name);
  }

  private async insertProject(client: Pool | PoolClient, tenantId: string, name: string): Promise<Project> {
    const { rows } = await client.query<{ id: string; created_at: Date }>(
      'INSERT INTO projects (tenant_id, name) VALUES ($1, $2) RETURNING id, created_at',
      [tenantId, name],
    );
    return { id: rows[0]!.id, tenantId, name, createdAt: rows[0]!.created_at };
  }

  async findTenant(id: string): Promise<Tenant | undefined> {
    if (!isUuid(id)) return undefined;
    const { rows } = await this.pool.query<TenantRow>(`SELECT ${TENANT_COLUMNS} FROM tenants WHERE id = $1`, [id]);
    return rows[0] && toTenant(rows[0]);
  }

  /** Sets or (null) removes a tenant's monthly span quota; undefined when there is no such tenant. */
  async setTenantQuota(id: string, monthlySpans: number | null): Promise<Tenant | undefined> {
    if (!isUuid(id)) return undefined;
    const { rows } = await this.pool.query<TenantRow>(`UPDATE tenants SET monthly_spans = $2 WHERE id = $1 RETURNING ${TENANT_COLUMNS}`, [
      id,
      monthlySpans,
    ]);
    return rows[0] && toTenant(rows[0]);
  }

  /** Every tenant that has a monthly span quota, with it: what the gateways enforce. */
  async tenantQuotas(): Promise<Map<string, number>> {
    const { rows } = await this.pool.query<{ id: string; monthly_spans: string }>(
      'SELECT id, monthly_spans FROM tenants WHERE monthly_spans IS NOT NULL',
    );
    return new Map(rows.map((r) => [r.id, Number(r.monthly_spans)]));
  }

  async findProject(id: string): Promise<Project | undefined> {
    if (!isUuid(id)) return undefined;
    const { rows } = await this.pool.query<ProjectRow>('SELECT id, tenant_id, name, created_at FROM projects WHERE id = $1', [id]);
    return rows[0] && toProject(rows[0]);
  }

  async projectsOf(tenantId: string): Promise<Project[]> {
    const { rows } = await this.pool.query<{ id: string; name: string; created_at: Date }>(
      'SELECT id, name, created_at FROM projects WHERE tenant_id = $1 ORDER BY created_at, name',
      [tenantId],
    );
    return rows.map((r) => ({ id: r.id, tenantId, name: r.name, createdAt: r.created_at }));
  }

  /** Every tenant with its projects, oldest first (two reads, whatever the number of tenants). */
  async tenantsWithProjects(): Promise<Array<Tenant & { projects: Project[] }>> {
    const [tenants, projects] = await Promise.all([
      this.pool.query<TenantRow>(`SELECT ${TENANT_COLUMNS} FROM tenants ORDER BY created_at, name`),
      this.pool.query<ProjectRow>('SELECT id, tenant_id, name, created_at FROM projects ORDER BY created_at, name'),
    ]);
    const byTenant = new Map<string, Project[]>();
    for (const r of projects.rows) {
      const list = byTenant.get(r.tenant_id) ?? [];
      list.push(toProject(r));
      byTenant.set(r.tenant_id, list);
    }
    return tenants.rows.map((t) => ({ ...toTenant(t), projects: byTenant.get(t.id) ?? [] }));
  }

  /** A project's keys, newest first, revoked ones included (never their salt or hash). */
  async apiKeysOf(projectId: string): Promise<ApiKey[]> {
    if (!isUuid(projectId)) return [];
    const { rows } = await this.pool.query<ApiKeyRow>(
      `SELECT ${KEY_COLUMNS} FROM api_keys WHERE project_id = $1 ORDER BY created_at DESC, id`,
      [projectId],
    );
    return rows.map(toApiKey);
  }

  async insertApiKey(key: {
    tenantId: string;
    projectId: string;
    name: string | null;
    lookupId: string;
    salt: Buffer;
    hash: Buffer;
    scopes: readonly ApiKeyScope[];
    expiresAt: Date | null;
  }): Promise<ApiKey> {
    const { rows } = await this.pool.query<ApiKeyRow>(
      `INSERT INTO api_keys (tenant_id, project_id, name, lookup_id, salt, hash, scopes, expires_at) VALUES ($1, $2, $3, $4, $5, $6, $7, $8) RETURNING ${KEY_COLUMNS}`,
      [key.tenantId, key.projectId, key.name, key.lookupId, key.salt, key.hash, key.scopes, key.expiresAt],
    );
    return toApiKey(rows[0]!);
  }

  async findKeyByLookupId(lookupId: string): Promise<StoredKey | undefined> {
    const { rows } = await this.pool.query<ApiKeyRow & { salt: Buffer; hash: Buffer }>(
      `SELECT ${KEY_COLUMNS}, salt, hash FROM api_keys WHERE lookup_id = $1`,
      [lookupId],
    );
    const r = rows[0];
    return r && { ...toApiKey(r), salt: r.salt, hash: r.hash };
  }

  /** Revokes (idempotently) and notifies every process in the same transaction. */
  async revokeApiKey(id: string): Promise<ApiKey | undefined> {
    if (!isUuid(id)) return undefined;
    return this.transaction(async (client) => {
      const { rows } = await client.query<ApiKeyRow>(
        `UPDATE api_keys SET revoked_at = COALESCE(revoked_at, now()) WHERE id = $1 RETURNING ${KEY_COLUMNS}`,
        [id],
      );
      if (!rows[0]) return undefined;
      await client.query('SELECT pg_notify($1, $2)', [KEY_REVOKED_CHANNEL, id]);
      return toApiKey(rows[0]);
    });
  }

  /** Writes last_used_at only when the stored value is over a minute old, whatever process asks. */
  async touchApiKey(id: string): Promise<void> {
    await this.pool.query(
      "UPDATE api_keys SET last_used_at = now() WHERE id = $1 AND (last_used_at IS NULL OR last_used_at < now() - interval '1 minute')",
      [id],
    );
  }

  /**
   * Changes a project's own ingest limits: a field given sets that limit (null: back to the gateway's
   * default), an absent one keeps it. Undefined when there is no such project.
   */
  async setIngestLimits(projectId: string, changes: Partial<ProjectIngestLimits>): Promise<ProjectIngestLimits | undefined> {
    if (!isUuid(projectId)) return undefined;
    const { rows } = await this.pool.query<LimitsRow>(
      `UPDATE projects SET ingest_spans_per_second = CASE WHEN $2 THEN $3::integer ELSE ingest_spans_per_second END,
                           ingest_bytes_per_second = CASE WHEN $4 THEN $5::bigint ELSE ingest_bytes_per_second END
       WHERE id = $1 RETURNING ingest_spans_per_second AS s, ingest_bytes_per_second AS b`,
      [
        projectId,
        changes.spansPerSecond !== undefined,
        changes.spansPerSecond ?? null,
        changes.bytesPerSecond !== undefined,
        changes.bytesPerSecond ?? null,
      ],
    );
    return rows[0] && toLimits(rows[0]);
  }

  /** A project's own ingest limits (null fields: the gateway's defaults); undefined when there is no such project. */
  async ingestLimits(projectId: string): Promise<ProjectIngestLimits | undefined> {
    if (!isUuid(projectId)) return undefined;
    const { rows } = await this.pool.query<LimitsRow>(
      'SELECT ingest_spans_per_second AS s, ingest_bytes_per_second AS b FROM projects WHERE id = $1',
      [projectId],
    );
    return rows[0] && toLimits(rows[0]);
  }

  /** Sets a model's prices from an instant on (the same model and instant again replaces them). */
  async upsertPriceOverride(o: {
    tenantId: string;
    projectId: string;
    model: string;
    inputPerMTok: number;
    outputPerMTok: number;
    cacheReadPerMTok: number | null;
    cacheWritePerMTok: number | null;
    effectiveFrom: Date;
  }): Promise<PriceOverrideRow> {
    const { rows } = await this.pool.query<PriceOverrideRow>(
      `INSERT INTO model_price_overrides (tenant_id, project_id, model, input_per_mtok, output_per_mtok, cache_read_per_mtok, cache_write_per_mtok, effective_from)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8)
       ON CONFLICT (project_id, model, effective_from) DO UPDATE SET input_per_mtok = EXCLUDED.input_per_mtok, output_per_mtok = EXCLUDED.output_per_mtok,
         cache_read_per_mtok = EXCLUDED.cache_read_per_mtok, cache_write_per_mtok = EXCLUDED.cache_write_per_mtok
       RETURNING ${PRICE_COLUMNS}`,
      [o.tenantId, o.projectId, o.model, o.inputPerMTok, o.outputPerMTok, o.cacheReadPerMTok, o.cacheWritePerMTok, o.effectiveFrom],
    );
    return rows[0]!;
  }

  async deletePriceOverride(id: string): Promise<PriceOverrideRow | undefined> {
    if (!isUuid(id)) return undefined;
    const { rows } = await this.pool.query<PriceOverrideRow>(`DELETE FROM model_price_overrides WHERE id = $1 RETURNING ${PRICE_COLUMNS}`, [
      id,
    ]);
    return rows[0];
  }

  /** A project's price overrides (USD per million tokens), oldest first. */
  async priceOverrides(projectId: string): Promise<PriceOverrideRow[]> {
    const { rows } = await this.pool.query<PriceOverrideRow>(
      `SELECT ${PRICE_COLUMNS} FROM model_price_overrides WHERE project_id = $1 ORDER BY effective_from, model`,
      [projectId],
    );
    return rows;
  }

  async findApiKey(id: string): Promise<ApiKey | undefined> {
    if (!isUuid(id)) return undefined;
    const { rows } = await this.pool.query<ApiKeyRow>(`SELECT ${KEY_COLUMNS} FROM api_keys WHERE id = $1`, [id]);
    return rows[0] && toApiKey(rows[0]);
  }

  private async transaction<T>(work: (client: PoolClient) => Promise<T>): Promise<T> {
    const held = await checkOut(this.pool, this.log, 'tenancy transaction');
    const client = held.client;
    /** Set when the connection may still be inside the transaction: it is then closed, never handed to the next caller. */
    let broken: Error | undefined;
    try {
      await client.query('BEGIN');
      const result = await work(client);
      await client.query('COMMIT');
      return result;
    } catch (error) {
      // The caller gets `error`. A ROLLBACK that fails as well usually means the connection is gone
      // (which aborts the transaction anyway); it is said, and the connection is discarded below.
      await client.query('ROLLBACK').catch((rollbackError: unknown) => {
        broken = rollbackError instanceof Error ? rollbackError : new Error(String(rollbackError));
        this.log.warn(
          `tenancy: ROLLBACK after a failed transaction failed too (${reasonOf(rollbackError)}); closing that connection. The transaction failed with: ${reasonOf(error)}`,
        );
      });
      throw error;
    } finally {
      held.release(broken);
    }
  }
}
