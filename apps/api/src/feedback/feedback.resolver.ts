import { Args, Context, Int, Mutation, Query, Resolver } from '@nestjs/graphql';
import { requireProject, type RequestContext } from '../graphql/request-context';
import { Feedback, FeedbackInput, FeedbackToken, ScoreConfig, ScoreConfigInput, ScoreDataType } from './feedback.model';

/** CONTRACT section 3 `submitFeedback`, score configs and browser-safe feedback tokens. */
@Resolver()
export class FeedbackResolver {
  @Mutation(() => Feedback)
  async submitFeedback(@Args('input') input: FeedbackInput, @Context() context: RequestContext): Promise<Feedback> {
    const scope = await requireProject(context);
    const record = await context.infra.feedback.submit(scope, input);
    return {
      id: record.id,
      traceId: record.traceId,
      spanId: record.spanId || null,
      name: record.name,
      dataType: record.dataType as ScoreDataType,
      value: input.value,
      comment: record.comment || null,
    };
  }

  @Mutation(() => ScoreConfig, { description: 'Defines a score name: its type and allowed values; later values that break it are refused.' })
  async createScoreConfig(@Args('input') input: ScoreConfigInput, @Context() context: RequestContext): Promise<ScoreConfig> {
    const scope = await requireProject(context);
    const config = await context.infra.feedback.createScoreConfig(scope, input);
    return { ...config, dataType: config.dataType as ScoreDataType };
  }

  @Query(() => [ScoreConfig])
  async scoreConfigs(@Context() context: RequestContext): Promise<ScoreConfig[]> {
    const scope = await requireProject(context);
    return (await context.infra.feedback.scoreConfigs(scope)).map((c) => ({ ...c, dataType: c.dataType as ScoreDataType }));
  }

  @Mutation(() => FeedbackToken, { description: 'A signed, expiring token a browser may use to send feedback for one trace and score name.' })
  async createFeedbackToken(
    @Args('traceId') traceId: string,
    @Args('name') name: string,
    @Args('ttlSeconds', { type: () => Int }) ttlSeconds: number,
    @Context() context: RequestContext,
  ): Promise<FeedbackToken> {
    const scope = await requireProject(context);
    const { token, expiresAt } = context.infra.feedback.createToken(scope, traceId, name, ttlSeconds);
    return { token, expiresAt: new Date(expiresAt * 1000).toISOString(), ttlSeconds };
  }
}
