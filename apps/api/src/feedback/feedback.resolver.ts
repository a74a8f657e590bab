import { FeedbackService } from '@spanforge/feedback';
import { Args, Int, Mutation, Query, Resolver } from '@nestjs/graphql';
import { ApiKeyScope, type ProjectScope } from '@spanforge/tenancy';
import { CurrentProject, RequireScope } from '../auth/access.decorators';
import { Feedback, FeedbackInput, FeedbackToken, ScoreConfig, ScoreConfigInput, ScoreDataType } from './feedback.model';

/** `submitFeedback` (INGEST), score configs (MANAGE to define, READ to list) and browser-safe feedback tokens (MANAGE). */
@Resolver()
export class FeedbackResolver {
  constructor(private readonly feedback: FeedbackService) {}

  @RequireScope(ApiKeyScope.INGEST)
  @Mutation(() => Feedback, {
    description: 'Stores a score for a trace or one of its spans (scope INGEST); the same id again keeps one score.',
  })
  async submitFeedback(
    @CurrentProject() scope: ProjectScope,
    @Args('input', { description: 'The score.' }) input: FeedbackInput,
  ): Promise<Feedback> {
    const record = await this.feedback.submit(scope, input);
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

  @RequireScope(ApiKeyScope.MANAGE)
  @Mutation(() => ScoreConfig, {
    description: 'Defines a score name: its type and allowed values; later values that break it are refused.',
  })
  async createScoreConfig(
    @CurrentProject() scope: ProjectScope,
    @Args('input', { description: 'The config; one per score name.' }) input: ScoreConfigInput,
  ): Promise<ScoreConfig> {
    const config = await this.feedback.createScoreConfig(scope, input);
    return { ...config, dataType: config.dataType as ScoreDataType };
  }

  @RequireScope(ApiKeyScope.MANAGE)
  @Mutation(() => ScoreConfig, {
    description: "Changes a score config's bounds or categories (its type stays: archive it and create a new one to change that).",
  })
  async updateScoreConfig(
    @CurrentProject() scope: ProjectScope,
    @Args('input', { description: 'The new config of an existing name, with the same dataType.' }) input: ScoreConfigInput,
  ): Promise<ScoreConfig> {
    const config = await this.feedback.updateScoreConfig(scope, input);
    return { ...config, dataType: config.dataType as ScoreDataType };
  }

  @RequireScope(ApiKeyScope.MANAGE)
  @Mutation(() => ScoreConfig, {
    description: 'Archives a score config: its name checks no value any more and may be given a new config. Stored scores stay.',
  })
  async archiveScoreConfig(
    @CurrentProject() scope: ProjectScope,
    @Args('name', { description: 'The score name whose config to archive.' }) name: string,
  ): Promise<ScoreConfig> {
    const config = await this.feedback.archiveScoreConfig(scope, name);
    return { ...config, dataType: config.dataType as ScoreDataType };
  }

  @RequireScope(ApiKeyScope.READ)
  @Query(() => [ScoreConfig], { description: "The project's live score configs, by name." })
  async scoreConfigs(@CurrentProject() scope: ProjectScope): Promise<ScoreConfig[]> {
    return (await this.feedback.scoreConfigs(scope)).map((c) => ({ ...c, dataType: c.dataType as ScoreDataType }));
  }

  @RequireScope(ApiKeyScope.MANAGE)
  @Mutation(() => FeedbackToken, {
    description: 'A signed, expiring token a browser may use to send feedback for one trace and score name.',
  })
  async createFeedbackToken(
    @CurrentProject() scope: ProjectScope,
    @Args('traceId', { description: 'The trace the token may score, 32 hex characters.' }) traceId: string,
    @Args('name', { description: 'The score name the token may send, 1 to 100 characters.' }) name: string,
    @Args('ttlSeconds', { type: () => Int, description: 'How long the token works, in seconds: 1 to 86,400 (a day).' }) ttlSeconds: number,
  ): Promise<FeedbackToken> {
    const { token, expiresAt } = this.feedback.createToken(scope, traceId, name, ttlSeconds);
    return { token, expiresAt: new Date(expiresAt * 1000).toISOString(), ttlSeconds };
  }
}
