import type { Pool } from 'pg';
import { DEFAULT_POLICY, validatePolicy, type DataPolicy, type DataPolicyInput } from '@spanforge/policy';
import { isUuid } from './tenancy.repository';

/** A project's policy as stored, with when it last changed (null: never set, the default applies). */
export interface StoredDataPolicy {
  projectId: string;
  policy: DataPolicy;
  updatedAt: Date | null;
}

/**
 * Data policies in PostgreSQL (`data_policies`). A stored policy passed validatePolicy when it was
 * set; it is validated again when read, so a policy stored by an older version with looser bounds
 * still reaches the worker in a form it can apply.
 */
export class DataPolicyRepository {
  constructor(private readonly pool: Pool) {}

  async find(projectId: string): Promise<StoredDataPolicy> {
    if (!isUuid(projectId)) return { projectId, policy: DEFAULT_POLICY, updatedAt: null };
    const { rows } = await this.pool.query<{ policy: DataPolicyInput; updated_at: Date }>(
      'SELECT policy, updated_at FROM data_policies WHERE project_id = $1',
      [projectId],
    );
    const row = rows[0];
    return row
      ? { projectId, policy: validatePolicy(row.policy), updatedAt: row.updated_at }
      : { projectId, policy: DEFAULT_POLICY, updatedAt: null };
  }

  /** Every project with a retention, with it (the worker's retention sweep). */
  async withRetention(): Promise<Array<{ tenantId: string; projectId: string; retentionDays: number }>> {
    const { rows } = await this.pool.query<{ tenant_id: string; project_id: string; retention_days: number }>(
      `SELECT p.tenant_id, d.project_id, (d.policy ->> 'retentionDays')::int AS retention_days
       FROM data_policies d JOIN projects p ON p.id = d.project_id
       WHERE jsonb_typeof(d.policy -> 'retentionDays') = 'number'`,
    );
    return rows.map((row) => ({ tenantId: row.tenant_id, projectId: row.project_id, retentionDays: Number(row.retention_days) }));
  }

  /** Merges `input` into the project's policy (absent fields keep theirs, null resets them) and stores it. */
  async update(projectId: string, input: DataPolicyInput): Promise<StoredDataPolicy> {
    const current = await this.find(projectId);
    const policy = validatePolicy(input, current.policy);
    const { rows } = await this.pool.query<{ updated_at: Date }>(
      `INSERT INTO data_policies (project_id, policy, updated_at) VALUES ($1, $2, now())
       ON CONFLICT (project_id) DO UPDATE SET policy = EXCLUDED.policy, updated_at = EXCLUDED.updated_at
       RETURNING updated_at`,
      [projectId, JSON.stringify(policy)],
    );
    return { projectId, policy, updatedAt: rows[0]!.updated_at };
  }
}
