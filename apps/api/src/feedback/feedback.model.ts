import { Field, Float, ID, InputType, Int, ObjectType, registerEnumType } from '@nestjs/graphql';
import { JSONScalar } from '../query/json.scalar';

export enum ScoreDataType {
  NUMERIC = 'NUMERIC',
  BOOLEAN = 'BOOLEAN',
  CATEGORICAL = 'CATEGORICAL',
  TEXT = 'TEXT',
}
registerEnumType(ScoreDataType, { name: 'ScoreDataType' });

@InputType()
export class FeedbackInput {
  @Field() traceId!: string;
  @Field(() => String, { nullable: true }) spanId?: string | null;
  @Field() name!: string;
  @Field(() => JSONScalar, { description: 'A number, a boolean or a string.' }) value!: number | boolean | string;
  @Field(() => String, { nullable: true }) comment?: string | null;
  @Field(() => String, { nullable: true }) source?: string | null;
  @Field(() => String, { nullable: true, description: 'Your id for this score: sending it again keeps one score.' }) id?: string | null;
}

@ObjectType()
export class Feedback {
  @Field() id!: string;
  @Field() traceId!: string;
  @Field(() => String, { nullable: true }) spanId!: string | null;
  @Field() name!: string;
  @Field(() => ScoreDataType) dataType!: ScoreDataType;
  @Field(() => JSONScalar) value!: unknown;
  @Field(() => String, { nullable: true }) comment!: string | null;
}

@InputType()
export class ScoreConfigInput {
  @Field() name!: string;
  @Field(() => ScoreDataType) dataType!: ScoreDataType;
  @Field(() => Float, { nullable: true }) minValue?: number | null;
  @Field(() => Float, { nullable: true }) maxValue?: number | null;
  @Field(() => [String], { nullable: true }) categories?: string[] | null;
}

@ObjectType()
export class ScoreConfig {
  @Field(() => ID) id!: string;
  @Field() name!: string;
  @Field(() => ScoreDataType) dataType!: ScoreDataType;
  @Field(() => Float, { nullable: true }) minValue!: number | null;
  @Field(() => Float, { nullable: true }) maxValue!: number | null;
  @Field(() => [String], { nullable: true }) categories!: string[] | null;
}

@ObjectType()
export class FeedbackToken {
  @Field({ description: 'Use as the bearer of POST /v1/feedback, for this trace and score name only.' }) token!: string;
  @Field(() => Date) expiresAt!: string;
  @Field(() => Int) ttlSeconds!: number;
}
