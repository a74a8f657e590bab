import { Field, Float, ID, InputType, Int, ObjectType, registerEnumType } from '@nestjs/graphql';
import { ApiKeyScope, DEFAULT_PROJECT_INGEST_LIMITS } from '@spanforge/tenancy';

registerEnumType(ApiKeyScope, {
  name: 'ApiKeyScope',
  description: 'What a project API key may do.',
  valuesMap: {
    INGEST: { description: 'Send spans (OTLP over HTTP and gRPC) and feedback (POST /v1/feedback, submitFeedback).' },
    READ: { description: "Query the project's data: every GraphQL query of project data, the waterfall, report downloads." },
    MANAGE: { description: "Change the project's configuration: cost report schedules, score configs, feedback tokens." },
  },
});
import { SafeIntScalar } from '../graphql/safe-int.scalar';

@ObjectType('Project', { description: "A project: one application's spans, keys, prices and settings, within a tenant." })
export class ProjectModel {
  @Field(() => ID, { description: 'The project id (a UUID).' }) id!: string;
  @Field(() => ID, { description: 'The id of the tenant it belongs to.' }) tenantId!: string;
  @Field({ description: 'The project name, unique within its tenant.' }) name!: string;
  @Field({ description: 'When the project was created.' }) createdAt!: Date;
}

@ObjectType('Tenant', { description: 'A customer account: it holds projects, whose data is kept apart from every other tenant.' })
export class TenantModel {
  @Field(() => ID, { description: 'The tenant id (a UUID).' }) id!: string;
  @Field({ description: 'The tenant name.' }) name!: string;
  @Field({ description: 'When the tenant was created.' }) createdAt!: Date;
  @Field(() => SafeIntScalar, {
    nullable: true,
    description:
      'Spans its projects together may have accepted in a calendar month (UTC); past it, exports get 429 until the month ends. null: no quota.',
  })
  monthlySpans!: number | null;
  @Field(() => [ProjectModel], { description: 'Its projects, oldest first.' }) projects!: ProjectModel[];
}

@ObjectType('ApiKey', { description: 'A project API key as stored: never its secret, which is shown once at creation.' })
export class ApiKeyModel {
  @Field(() => ID, { description: 'The key id (a UUID): what revokeApiKey takes.' }) id!: string;
  @Field(() => ID, { description: 'The project the key belongs to.' }) projectId!: string;
  @Field(() => String, { nullable: true, description: 'The name given at creation; null when none was.' }) name!: string | null;
  @Field({ description: 'The first characters of the secret (`sf_<lookup id>`), safe to show.' }) prefix!: string;
  @Field(() => [ApiKeyScope], { description: 'What the key may do.' }) scopes!: ApiKeyScope[];
  @Field({ description: 'When the key was created.' }) createdAt!: Date;
  @Field(() => Date, { nullable: true, description: 'From then on the key is refused like a revoked one; null: it does not expire.' })
  expiresAt!: Date | null;
  @Field(() => Date, { nullable: true, description: 'When the key was revoked; null while it is not.' }) revokedAt!: Date | null;
  @Field(() => Date, {
    nullable: true,
    description: 'When the key was last accepted (updated at most about once a minute); null if it never was.',
  })
  lastUsedAt!: Date | null;
}

@ObjectType('CreatedApiKey', { description: 'A new API key with its secret.' })
export class CreatedApiKeyModel {
  @Field({ description: 'The secret, shown this once. Only its hash is stored.' }) secret!: string;
  @Field(() => ApiKeyModel, { description: 'The key as stored.' }) apiKey!: ApiKeyModel;
}

@InputType({ description: 'A new tenant.' })
export class CreateTenantInput {
  @Field({ description: 'The tenant name, 1 to 200 characters (spaces at either end are dropped).' }) name!: string;
}

@InputType({ description: 'A new project in a tenant.' })
export class CreateProjectInput {
  @Field(() => ID, { description: 'The tenant to create it in.' }) tenantId!: string;
  @Field({ description: 'The project name, 1 to 200 characters, unique within the tenant.' }) name!: string;
}

@InputType({ description: 'A new API key for a project.' })
export class CreateApiKeyInput {
  @Field(() => ID, { description: 'The project the key will belong to.' }) projectId!: string;
  @Field(() => String, { nullable: true, description: 'A name to recognise the key by (e.g. "prod exporter"); optional.' })
  name?: string | null;
  @Field(() => [ApiKeyScope], { nullable: true, description: 'Left out: all three. An exporter needs only INGEST, a dashboard only READ.' })
  scopes?: ApiKeyScope[] | null;
  @Field(() => Date, { nullable: true, description: 'When the key stops working; left out, it does not expire.' }) expiresAt?: Date | null;
}

@ObjectType('ModelPrice', {
  description:
    "A project's own price for a model (USD per million tokens), in force from effectiveFrom; it wins over the bundled price table.",
})
export class ModelPriceModel {
  @Field(() => ID, { description: 'The price id: what deleteModelPrice takes.' }) id!: string;
  @Field(() => ID, { description: 'The project it prices.' }) projectId!: string;
  @Field({ description: 'The model name as spans carry it (gen_ai.response.model, else gen_ai.request.model).' }) model!: string;
  @Field(() => Float, { description: 'USD per million uncached input tokens.' }) inputPerMTok!: number;
  @Field(() => Float, { description: 'USD per million output tokens (reasoning tokens included).' }) outputPerMTok!: number;
  @Field(() => Float, { nullable: true, description: 'USD per million cached input tokens read; when null, the input price.' })
  cacheReadPerMTok!: number | null;
  @Field(() => Float, { nullable: true, description: 'USD per million tokens written to the cache; when null, the input price.' })
  cacheWritePerMTok!: number | null;
  @Field({ description: 'From when the price applies, by span start (1970-01-01T00:00:00Z: always).' }) effectiveFrom!: Date;
  @Field({ description: 'When the price was set.' }) createdAt!: Date;
}

@InputType({ description: "A project's price for a model; the same model and effectiveFrom again replaces it." })
export class ModelPriceInput {
  @Field(() => ID, { description: 'The project to price for.' }) projectId!: string;
  @Field({ description: 'The model name as spans carry it, 1 to 200 characters.' }) model!: string;
  @Field(() => Float, { description: 'USD per million uncached input tokens (not negative).' }) inputPerMTok!: number;
  @Field(() => Float, { description: 'USD per million output tokens (not negative).' }) outputPerMTok!: number;
  @Field(() => Float, { nullable: true, description: 'USD per million cached input tokens read; absent or null: the input price.' })
  cacheReadPerMTok?: number | null;
  @Field(() => Float, { nullable: true, description: 'USD per million tokens written to the cache; absent or null: the input price.' })
  cacheWritePerMTok?: number | null;
  @Field(() => Date, { nullable: true, description: 'From when the price applies (by span start); absent means always.' })
  effectiveFrom?: Date | null;
}

@ObjectType('IngestLimits', {
  description: `A project's own ingest rate limits; null means the gateway's default (${DEFAULT_PROJECT_INGEST_LIMITS.spansPerSecond} spans/s, ${DEFAULT_PROJECT_INGEST_LIMITS.bytesPerSecond} bytes/s). Over them, exports get 429 with Retry-After.`,
})
export class IngestLimitsModel {
  @Field(() => ID, { description: 'The project they apply to.' }) projectId!: string;
  @Field(() => Int, { nullable: true, description: 'Spans per second, per gateway process; null: the default.' })
  spansPerSecond!: number | null;
  @Field(() => SafeIntScalar, {
    nullable: true,
    description: 'Bytes of OTLP body per second (after decompression), per gateway process; null: the default.',
  })
  bytesPerSecond!: number | null;
}

@InputType({ description: "A change to a project's ingest rate limits." })
export class IngestLimitsInput {
  @Field(() => ID, { description: 'The project to change.' }) projectId!: string;
  @Field(() => Int, { nullable: true, description: 'Spans per second, 1 to 2,147,483,647. null: back to the default; absent: unchanged.' })
  spansPerSecond?: number | null;
  @Field(() => SafeIntScalar, {
    nullable: true,
    description: 'Bytes of OTLP body per second, at least 1. null: back to the default; absent: unchanged.',
  })
  bytesPerSecond?: number | null;
}

@InputType({ description: "A tenant's monthly span quota." })
export class SetTenantQuotaInput {
  @Field(() => ID, { description: 'The tenant.' }) tenantId!: string;
  @Field(() => SafeIntScalar, {
    nullable: true,
    description: 'Spans a calendar month (UTC) for all its projects together, from 0; null or absent: no quota.',
  })
  monthlySpans?: number | null;
}
