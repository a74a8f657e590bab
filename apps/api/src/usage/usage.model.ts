import { Field, ID, ObjectType } from '@nestjs/graphql';
import { SafeIntScalar } from '../graphql/safe-int.scalar';

@ObjectType('UsageRow', {
  description: "One project's ingest in one bucket, from the ingest accounting: each export counts in the minute the gateway took it.",
})
export class UsageRowModel {
  @Field({ description: 'Start of the bucket (UTC); without a granularity, `from`.' }) time!: Date;
  @Field(() => ID, { description: 'The project.' }) projectId!: string;
  @Field(() => SafeIntScalar, { description: 'Spans stored: what a tenant quota counts.' }) spansAccepted!: number;
  @Field(() => SafeIntScalar, {
    description: 'Invalid spans of exports answered 200 (the partial_success rejections: invalid ids, end before start, …).',
  })
  spansRejected!: number;
  @Field(() => SafeIntScalar, {
    description:
      'Spans of exports refused whole: over the rate or the queue share (429), over the tenant quota (429), the queue full or away (503). An export refused before its body was decoded adds none.',
  })
  spansRefused!: number;
  @Field(() => SafeIntScalar, { description: 'Bytes of the exports answered 200, after decompression.' }) bytesAccepted!: number;
}
