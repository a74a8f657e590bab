import { badInput, notFound } from '@spanforge/errors';
import { generateSecret, hashSecret, newSalt } from './api-key.secret';
import type { ApiKeyVerifier } from './api-key.verifier';
import { ALL_SCOPES, type ApiKey, type ApiKeyScope, type Project, type Tenant } from './tenancy.model';
import {
  PROJECT_NAME_CONSTRAINT,
  isUniqueViolation,
  type ProjectIngestLimits,
  type PriceOverrideRow,
  type TenancyRepository,
} from './tenancy.repository';
import { PriceTable, type PriceOverride } from '@spanforge/pricing';

export const DEFAULT_PROJECT_NAME = 'default';
const MAX_NAME = 200;

function cleanName(value: string, what: string): string {
  const name = value.trim();
  if (name.length === 0) throw badInput(`${what} must not be empty`);
  if (name.length > MAX_NAME) throw badInput(`${what} must be at most ${MAX_NAME} characters`);
  return name;
}

/** The admin operations on tenants, projects, keys and per-project settings (docs/api.md, admin). */
export class TenancyService {
  constructor(
    private readonly repository: TenancyRepository,
    private readonly pepper: string,
    private readonly verifier?: ApiKeyVerifier,
  ) {}

  /** Every tenant starts with a project named "default". */
  async createTenant(name: string): Promise<{ tenant: Tenant; project: Project }> {
    return this.repository.createTenantWithProject(cleanName(name, 'tenant name'), DEFAULT_PROJECT_NAME);
  }

  /**
   * The name is checked by the insert itself: the unique constraint on (tenant, name) is the one
   * answer that holds under concurrent creations. Only PostgreSQL's unique_violation on it means
   * "taken"; any other failure (PostgreSQL down, a timeout) propagates as the failure it is.
   */
  async createProject(tenantId: string, name: string): Promise<Project> {
    const projectName = cleanName(name, 'project name');
    let project: Project | undefined;
    try {
      project = await this.repository.createProject(tenantId, projectName);
    } catch (error) {
      if (isUniqueViolation(error, PROJECT_NAME_CONSTRAINT)) throw badInput(`the tenant already has a project named "${projectName}"`);
      throw error;
    }
    if (!project) throw notFound(`no tenant with id ${tenantId}`);
    return project;
  }

  /**
   * The secret is returned here and never again: only its hash is stored. Without scopes the key
   * may do everything in its project; an expiry must lie in the future.
   */
  async createApiKey(
    projectId: string,
    name?: string | null,
    options: { scopes?: readonly ApiKeyScope[] | null; expiresAt?: Date | null } = {},
  ): Promise<{ secret: string; apiKey: ApiKey }> {
    const scopes = options.scopes == null ? ALL_SCOPES : [...new Set(options.scopes)];
    if (scopes.length === 0) throw badInput('scopes must name at least one of INGEST, READ, MANAGE (leave it out for all three)');
    const expiresAt = options.expiresAt ?? null;
    if (expiresAt && expiresAt.getTime() <= Date.now()) throw badInput(`expiresAt must be in the future, got ${expiresAt.toISOString()}`);
    const project = await this.repository.findProject(projectId);
    if (!project) throw notFound(`no project with id ${projectId}`);
    const { secret, lookupId } = generateSecret();
    const salt = newSalt();
    const apiKey = await this.repository.insertApiKey({
      tenantId: project.tenantId,
      projectId: project.id,
      name: name == null ? null : cleanName(name, 'key name'),
      lookupId,
      salt,
      hash: hashSecret(secret, salt, this.pepper),
      scopes,
      expiresAt,
    });
    return { secret, apiKey };
  }

  async revokeApiKey(id: string): Promise<ApiKey> {
    const apiKey = await this.repository.revokeApiKey(id);
    if (!apiKey) throw notFound(`no API key with id ${id}`);
    this.verifier?.evict(apiKey.id);
    return apiKey;
  }

  tenants(): Promise<Array<Tenant & { projects: Project[] }>> {
    return this.repository.tenantsWithProjects();
  }

  async apiKeysOf(projectId: string): Promise<ApiKey[]> {
    if (!(await this.repository.findProject(projectId))) throw notFound(`no project with id ${projectId}`);
    return this.repository.apiKeysOf(projectId);
  }

  /** A project's own model prices (USD per million tokens), oldest first. */
  async modelPrices(projectId: string): Promise<PriceOverrideRow[]> {
    if (!(await this.repository.findProject(projectId))) throw notFound(`no project with id ${projectId}`);
    return this.repository.priceOverrides(projectId);
  }

  /**
   * Sets a model's price for one project from an instant on. Checked together with the project's
   * other prices, the way the worker builds its price table, so a stored price never stops a worker
   * from pricing the project's spans. Spans already stored keep their cost.
   */
  async setModelPrice(input: ModelPriceInput): Promise<PriceOverrideRow> {
    const project = await this.repository.findProject(input.projectId);
    if (!project) throw notFound(`no project with id ${input.projectId}`);
    const model = cleanName(input.model, 'model');
    const effectiveFrom = input.effectiveFrom ?? new Date(0);
    if (Number.isNaN(effectiveFrom.getTime())) throw badInput('effectiveFrom must be a valid instant');
    const price = {
      model,
      inputPerMTok: input.inputPerMTok,
      outputPerMTok: input.outputPerMTok,
      cacheReadPerMTok: input.cacheReadPerMTok ?? null,
      cacheWritePerMTok: input.cacheWritePerMTok ?? null,
      effectiveFrom,
    };
    const others = (await this.repository.priceOverrides(project.id)).filter(
      (row) => !(row.model === model && row.effective_from.getTime() === effectiveFrom.getTime()),
    );
    // Throws BAD_USER_INPUT naming every problem (a negative price, a name another price already claims).
    PriceTable.bundled().withOverrides([...others.map(toPriceOverride), { id: 'new', ...price }]);
    return this.repository.upsertPriceOverride({ tenantId: project.tenantId, projectId: project.id, ...price });
  }

  async deleteModelPrice(id: string): Promise<PriceOverrideRow> {
    const row = await this.repository.deletePriceOverride(id);
    if (!row) throw notFound(`no model price with id ${id}`);
    return row;
  }

  /** A project's own ingest limits (null: the gateway's default). */
  async ingestLimits(projectId: string): Promise<ProjectIngestLimits> {
    const limits = await this.repository.ingestLimits(projectId);
    if (!limits) throw notFound(`no project with id ${projectId}`);
    return limits;
  }

  /**
   * Changes a project's ingest limits: a field given sets that limit (null: back to the gateway's
   * default), an absent one keeps it. Gateways cache limits for 30 s, so a change reaches all of
   * them within that.
   */
  async setIngestLimits(input: {
    projectId: string;
    spansPerSecond?: number | null;
    bytesPerSecond?: number | null;
  }): Promise<ProjectIngestLimits> {
    const problems: string[] = [];
    const check = (value: number | null | undefined, field: string, max: number) => {
      if (value !== undefined && value !== null && (!Number.isInteger(value) || value < 1 || value > max))
        problems.push(`${field} must be an integer from 1 to ${max}, or null for the default`);
    };
    check(input.spansPerSecond, 'spansPerSecond', 2_147_483_647);
    check(input.bytesPerSecond, 'bytesPerSecond', Number.MAX_SAFE_INTEGER);
    if (problems.length > 0) throw badInput(problems.join('; '));
    const stored = await this.repository.setIngestLimits(input.projectId, {
      spansPerSecond: input.spansPerSecond,
      bytesPerSecond: input.bytesPerSecond,
    });
    if (!stored) throw notFound(`no project with id ${input.projectId}`);
    return stored;
  }

  findProject(id: string): Promise<Project | undefined> {
    return this.repository.findProject(id);
  }

  /**
   * Sets a tenant's monthly span quota (a whole number from 0), or removes it (null). Every
   * gateway applies it within about 10 s.
   */
  async setTenantQuota(tenantId: string, monthlySpans: number | null): Promise<Tenant> {
    if (monthlySpans !== null && !(Number.isSafeInteger(monthlySpans) && monthlySpans >= 0))
      throw badInput('monthlySpans must be a whole number from 0, or null for no quota');
    const tenant = await this.repository.setTenantQuota(tenantId, monthlySpans);
    if (!tenant) throw notFound(`no tenant with id ${tenantId}`);
    return tenant;
  }

  findTenant(id: string): Promise<Tenant | undefined> {
    return this.repository.findTenant(id);
  }

  projectsOf(tenantId: string): Promise<Project[]> {
    return this.repository.projectsOf(tenantId);
  }
}

export interface ModelPriceInput {
  projectId: string;
  model: string;
  inputPerMTok: number;
  outputPerMTok: number;
  cacheReadPerMTok?: number | null;
  cacheWritePerMTok?: number | null;
  effectiveFrom?: Date | null;
}

/** A stored price as the pricing library takes it. */
export function toPriceOverride(row: PriceOverrideRow): PriceOverride {
  return {
    id: row.id,
    model: row.model,
    inputPerMTok: row.input_per_mtok,
    outputPerMTok: row.output_per_mtok,
    cacheReadPerMTok: row.cache_read_per_mtok,
    cacheWritePerMTok: row.cache_write_per_mtok,
    effectiveFrom: row.effective_from,
  };
}
