import { Field, ID, InputType, ObjectType } from '@nestjs/graphql';

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
  @Field() createdAt!: Date;
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
}
