import { Args, ID, Mutation, Query, Resolver } from '@nestjs/graphql';
import { notFound } from '@spanforge/errors';
import { TenancyService, type ProjectScope } from '@spanforge/tenancy';
import { AdminOnly, AnyProjectKey, CurrentProject } from '../auth/access.decorators';
import type { PriceOverrideRow } from '@spanforge/tenancy';
import {
  ApiKeyModel,
  CreateApiKeyInput,
  CreateProjectInput,
  CreateTenantInput,
  CreatedApiKeyModel,
  IngestLimitsInput,
  IngestLimitsModel,
  ModelPriceInput,
  ModelPriceModel,
  ProjectModel,
  SetTenantQuotaInput,
  TenantModel,
} from './tenancy.model';

/** pg reads the double precision prices as numbers already. */
function toModelPrice(row: PriceOverrideRow): ModelPriceModel {
  return {
    id: row.id,
    projectId: row.project_id,
    model: row.model,
    inputPerMTok: row.input_per_mtok,
    outputPerMTok: row.output_per_mtok,
    cacheReadPerMTok: row.cache_read_per_mtok,
    cacheWritePerMTok: row.cache_write_per_mtok,
    effectiveFrom: row.effective_from,
    createdAt: row.created_at,
  };
}

/** Tenants, projects, keys and per-project settings, behind the admin token; `currentProject` for any project key. */
@AdminOnly()
@Resolver()
export class TenancyResolver {
  constructor(private readonly tenancy: TenancyService) {}

  @Mutation(() => TenantModel, { description: 'Creates a tenant with a project named "default" (admin token).' })
  async createTenant(@Args('input', { description: 'The new tenant.' }) input: CreateTenantInput): Promise<TenantModel> {
    const { tenant, project } = await this.tenancy.createTenant(input.name);
    return { ...tenant, projects: [project] };
  }

  @Mutation(() => TenantModel, {
    description:
      "Sets a tenant's monthly span quota, or removes it (null). Every gateway applies it within about 10 s: past it, every project of the tenant gets 429 until the month (UTC) ends (admin token).",
  })
  async setTenantQuota(@Args('input', { description: 'The quota.' }) input: SetTenantQuotaInput): Promise<TenantModel> {
    const tenant = await this.tenancy.setTenantQuota(input.tenantId, input.monthlySpans ?? null);
    return { ...tenant, projects: await this.tenancy.projectsOf(tenant.id) };
  }

  @Mutation(() => ProjectModel, { description: 'Creates a project in a tenant (admin token).' })
  async createProject(@Args('input', { description: 'The new project.' }) input: CreateProjectInput): Promise<ProjectModel> {
    return this.tenancy.createProject(input.tenantId, input.name);
  }

  @Mutation(() => CreatedApiKeyModel, {
    description: 'Creates an API key for a project and returns its secret, shown this once (admin token).',
  })
  async createApiKey(@Args('input', { description: 'The new key.' }) input: CreateApiKeyInput): Promise<CreatedApiKeyModel> {
    return this.tenancy.createApiKey(input.projectId, input.name, { scopes: input.scopes, expiresAt: input.expiresAt });
  }

  @Mutation(() => ApiKeyModel, { description: 'Revokes an API key: every process refuses it within a second (admin token).' })
  async revokeApiKey(@Args('id', { type: () => ID, description: 'The key id (ApiKey.id).' }) id: string): Promise<ApiKeyModel> {
    return this.tenancy.revokeApiKey(id);
  }

  @Query(() => [TenantModel], { description: 'Every tenant with its projects, oldest first (admin token).' })
  async tenants(): Promise<TenantModel[]> {
    return this.tenancy.tenants();
  }

  @Query(() => [ApiKeyModel], {
    description: "A project's API keys, newest first, revoked ones included; their prefixes, never their secrets (admin token).",
  })
  async apiKeys(@Args('projectId', { type: () => ID, description: 'The project.' }) projectId: string): Promise<ApiKeyModel[]> {
    return this.tenancy.apiKeysOf(projectId);
  }

  @Query(() => [ModelPriceModel], { description: "A project's own model prices, oldest first (admin token)." })
  async modelPrices(@Args('projectId', { type: () => ID, description: 'The project.' }) projectId: string): Promise<ModelPriceModel[]> {
    return (await this.tenancy.modelPrices(projectId)).map(toModelPrice);
  }

  @Mutation(() => ModelPriceModel, {
    description:
      "Sets a model's price for one project from effectiveFrom on (the same model and instant again replaces it). Workers use it within a minute, for spans ingested from then on; stored spans keep their cost (admin token).",
  })
  async setModelPrice(@Args('input', { description: 'The price.' }) input: ModelPriceInput): Promise<ModelPriceModel> {
    return toModelPrice(await this.tenancy.setModelPrice(input));
  }

  @Mutation(() => ModelPriceModel, {
    description: 'Removes a project price; spans ingested afterwards are priced by the bundled table again (admin token).',
  })
  async deleteModelPrice(
    @Args('id', { type: () => ID, description: 'The price id (ModelPrice.id).' }) id: string,
  ): Promise<ModelPriceModel> {
    return toModelPrice(await this.tenancy.deleteModelPrice(id));
  }

  @Query(() => IngestLimitsModel, { description: "A project's own ingest rate limits (admin token)." })
  async ingestLimits(@Args('projectId', { type: () => ID, description: 'The project.' }) projectId: string): Promise<IngestLimitsModel> {
    return { projectId, ...(await this.tenancy.ingestLimits(projectId)) };
  }

  @Mutation(() => IngestLimitsModel, {
    description:
      "Changes a project's ingest rate limits: a field given sets that limit (null: back to the default), an absent one keeps it. Every gateway applies them within 30 s (admin token).",
  })
  async setIngestLimits(@Args('input', { description: 'The limits to change.' }) input: IngestLimitsInput): Promise<IngestLimitsModel> {
    return { projectId: input.projectId, ...(await this.tenancy.setIngestLimits(input)) };
  }

  @AnyProjectKey()
  @Query(() => ProjectModel, { description: 'The project the bearer API key belongs to (a key of any scope).' })
  async currentProject(@CurrentProject() scope: ProjectScope): Promise<ProjectModel> {
    const project = await this.tenancy.findProject(scope.projectId);
    if (!project) throw notFound('the project of this key no longer exists');
    return project;
  }
}
