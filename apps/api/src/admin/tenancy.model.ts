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

@ObjectType('Project')
export class ProjectModel {
  @Field(() => ID) id!: string;
  @Field(() => ID) tenantId!: string;
  @Field() name!: string;
  @Field() createdAt!: Date;
}

@ObjectType('Tenant')
export class TenantModel {
  @Field(() => ID) id!: string;
  @Field() name!: string;
  @Field() createdAt!: Date;
  @Field(() => [ProjectModel]) projects!: ProjectModel[];
}

@ObjectType('ApiKey')
export class ApiKeyModel {
  @Field(() => ID) id!: string;
  @Field(() => ID) projectId!: string;
  @Field(() => String, { nullable: true }) name!: string | null;
  @Field({ description: 'The first characters of the secret (`sf_<lookup id>`), safe to show.' }) prefix!: string;
  @Field(() => [ApiKeyScope]) scopes!: ApiKeyScope[];
  @Field() createdAt!: Date;
  @Field(() => Date, { nullable: true, description: 'From then on the key is refused like a revoked one; null: it does not expire.' })
  expiresAt!: Date | null;
  @Field(() => Date, { nullable: true }) revokedAt!: Date | null;
  @Field(() => Date, { nullable: true }) lastUsedAt!: Date | null;
}

@ObjectType('CreatedApiKey')
export class CreatedApiKeyModel {
  @Field({ description: 'The secret, shown this once. Only its hash is stored.' }) secret!: string;
  @Field(() => ApiKeyModel) apiKey!: ApiKeyModel;
}

@InputType()
export class CreateTenantInput {
  @Field() name!: string;
}

@InputType()
export class CreateProjectInput {
  @Field(() => ID) tenantId!: string;
  @Field() name!: string;
}

@InputType()
export class CreateApiKeyInput {
  @Field(() => ID) projectId!: string;
  @Field(() => String, { nullable: true }) name?: string | null;
  @Field(() => [ApiKeyScope], { nullable: true, description: 'Left out: all three. An exporter needs only INGEST, a dashboard only READ.' })
  scopes?: ApiKeyScope[] | null;
  @Field(() => Date, { nullable: true, description: 'When the key stops working; left out, it does not expire.' }) expiresAt?: Date | null;
}

@ObjectType('ModelPrice', {
  description:
    "A project's own price for a model (USD per million tokens), in force from effectiveFrom; it wins over the bundled price table.",
})
export class ModelPriceModel {
  @Field(() => ID) id!: string;
  @Field(() => ID) projectId!: string;
  @Field({ description: 'The model name as spans carry it (gen_ai.response.model, else gen_ai.request.model).' }) model!: string;
  @Field(() => Float) inputPerMTok!: number;
  @Field(() => Float) outputPerMTok!: number;
  @Field(() => Float, { nullable: true, description: 'Cached input tokens; when null, the input price.' }) cacheReadPerMTok!: number | null;
  @Field(() => Float, { nullable: true, description: 'Cache writes; when null, the input price.' }) cacheWritePerMTok!: number | null;
  @Field() effectiveFrom!: Date;
  @Field() createdAt!: Date;
}

@InputType()
export class ModelPriceInput {
  @Field(() => ID) projectId!: string;
  @Field() model!: string;
  @Field(() => Float) inputPerMTok!: number;
  @Field(() => Float) outputPerMTok!: number;
  @Field(() => Float, { nullable: true }) cacheReadPerMTok?: number | null;
  @Field(() => Float, { nullable: true }) cacheWritePerMTok?: number | null;
  @Field(() => Date, { nullable: true, description: 'From when the price applies (by span start); absent means always.' })
  effectiveFrom?: Date | null;
}

@ObjectType('IngestLimits', {
  description: `A project's own ingest rate limits; null means the gateway's default (${DEFAULT_PROJECT_INGEST_LIMITS.spansPerSecond} spans/s, ${DEFAULT_PROJECT_INGEST_LIMITS.bytesPerSecond} bytes/s). Over them, exports get 429 with Retry-After.`,
})
export class IngestLimitsModel {
  @Field(() => ID) projectId!: string;
  @Field(() => Int, { nullable: true }) spansPerSecond!: number | null;
  @Field(() => SafeIntScalar, { nullable: true, description: 'Bytes of OTLP body per second (after decompression).' }) bytesPerSecond!:
    number | null;
}

@InputType()
export class IngestLimitsInput {
  @Field(() => ID) projectId!: string;
  @Field(() => Int, { nullable: true, description: 'null: back to the default; absent: unchanged.' }) spansPerSecond?: number | null;
  @Field(() => SafeIntScalar, { nullable: true, description: 'null: back to the default; absent: unchanged.' }) bytesPerSecond?:
    number | null;
}
