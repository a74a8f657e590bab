import { Field, Float, ID, InputType, Int, ObjectType, registerEnumType } from '@nestjs/graphql';
import { JSONScalar } from '../query/json.scalar';

export enum ScoreDataType {
  NUMERIC = 'NUMERIC',
  BOOLEAN = 'BOOLEAN',
  CATEGORICAL = 'CATEGORICAL',
  TEXT = 'TEXT',
}
registerEnumType(ScoreDataType, {
  name: 'ScoreDataType',
  description: 'The kind of value a score holds.',
  valuesMap: {
    NUMERIC: { description: 'A number, such as a 1–5 rating; a score config may bound it.' },
    BOOLEAN: { description: 'true or false, such as thumbs up or down; means count true as 1.' },
    CATEGORICAL: {
      description:
        "A string that names a category: a score config of type CATEGORICAL makes the name's strings CATEGORICAL and may list the allowed ones.",
    },
    TEXT: { description: 'Free text, at most 4,000 characters.' },
  },
});

@InputType({ description: 'A score for a trace or one of its spans (the same fields and rules as POST /v1/feedback).' })
export class FeedbackInput {
  @Field({ description: 'The trace scored: 32 hex characters. It may not be stored yet; the score joins it when it lands.' })
  traceId!: string;
  @Field(() => String, { nullable: true, description: 'The span scored, 16 hex characters; absent: the trace as a whole.' })
  spanId?: string | null;
  @Field({ description: 'The score name, 1 to 100 characters, such as "helpful".' }) name!: string;
  @Field(() => JSONScalar, {
    description:
      'A number (NUMERIC), a boolean (BOOLEAN) or a string (TEXT, or CATEGORICAL when the name has such a config); text at most 4,000 characters.',
  })
  value!: number | boolean | string;
  @Field(() => String, { nullable: true, description: 'A comment, at most 4,000 characters.' }) comment?: string | null;
  @Field(() => String, { nullable: true, description: 'Where the score comes from (e.g. "web", "eval"), at most 100 characters.' })
  source?: string | null;
  @Field(() => String, {
    nullable: true,
    description: 'Your id for this score, at most 200 characters: sending it again keeps one score.',
  })
  id?: string | null;
}

@ObjectType({ description: 'A stored score.' })
export class Feedback {
  @Field({ description: 'The score id: the one sent, else one generated.' }) id!: string;
  @Field({ description: 'The trace scored (32 hex characters).' }) traceId!: string;
  @Field(() => String, { nullable: true, description: 'The span scored; null when the score is for the whole trace.' }) spanId!:
    string | null;
  @Field({ description: 'The score name.' }) name!: string;
  @Field(() => ScoreDataType, { description: "The kind of value, from the value itself or the name's score config." })
  dataType!: ScoreDataType;
  @Field(() => JSONScalar, { description: 'The value as sent: a number, a boolean or a string.' }) value!: unknown;
  @Field(() => String, { nullable: true, description: 'The comment; null when none was sent.' }) comment!: string | null;
}

@InputType({ description: 'What values a score name takes: its type and, for NUMERIC, its range, for CATEGORICAL, its categories.' })
export class ScoreConfigInput {
  @Field({ description: 'The score name it applies to, 1 to 100 characters.' }) name!: string;
  @Field(() => ScoreDataType, { description: 'The kind of value the name takes.' }) dataType!: ScoreDataType;
  @Field(() => Float, { nullable: true, description: 'NUMERIC only: the lowest value allowed; absent: no lower bound.' })
  minValue?: number | null;
  @Field(() => Float, { nullable: true, description: 'NUMERIC only: the highest value allowed; absent: no upper bound.' })
  maxValue?: number | null;
  @Field(() => [String], {
    nullable: true,
    description: 'CATEGORICAL only: the allowed values, 1 to 100 of 1 to 200 characters each; absent: any string.',
  })
  categories?: string[] | null;
}

@ObjectType({ description: 'The rule a score name follows: later values that break it are refused with BAD_USER_INPUT.' })
export class ScoreConfig {
  @Field(() => ID, { description: 'The config id.' }) id!: string;
  @Field({ description: 'The score name it applies to.' }) name!: string;
  @Field(() => ScoreDataType, { description: 'The kind of value the name takes.' }) dataType!: ScoreDataType;
  @Field(() => Float, { nullable: true, description: 'The lowest NUMERIC value allowed; null: no lower bound (or not NUMERIC).' })
  minValue!: number | null;
  @Field(() => Float, { nullable: true, description: 'The highest NUMERIC value allowed; null: no upper bound (or not NUMERIC).' })
  maxValue!: number | null;
  @Field(() => [String], { nullable: true, description: 'The allowed CATEGORICAL values; null: any string (or not CATEGORICAL).' })
  categories!: string[] | null;
}

@ObjectType({ description: 'A token a browser may use to send scores for one trace and score name, without the project key.' })
export class FeedbackToken {
  @Field({ description: 'Use as the bearer of POST /v1/feedback, for this trace and score name only.' }) token!: string;
  @Field(() => Date, { description: 'When the token stops working.' }) expiresAt!: string;
  @Field(() => Int, { description: 'Its lifetime in seconds, as asked.' }) ttlSeconds!: number;
}
