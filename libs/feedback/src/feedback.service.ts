import { badInput, DomainError, ErrorCode, notFound } from '@spanforge/errors';
import { signFeedbackToken, verifyFeedbackToken } from './feedback-token';
import type { FeedbackInput, FeedbackRecord, FeedbackScope, FeedbackTokenClaims, ScoreConfig, ScoreType } from './feedback.model';
import type { FeedbackRepository } from './feedback.repository';
import { validateFeedback, validateScoreConfig } from './feedback.validation';
import { FeedbackWriter } from './feedback.writer';

/** Longest lifetime of a browser-safe token: a day. */
const MAX_TOKEN_TTL_S = 86_400;

/** Feedback: accept scores (with a key or a token), score configs, browser-safe tokens. */
export class FeedbackService {
  private readonly writer: FeedbackWriter;

  constructor(
    private readonly repository: FeedbackRepository,
    private readonly pepper: string,
    /** Told of each score accepted for a trace not stored (yet): the api counts them in /metrics. */
    onUnknownTrace: () => void = () => undefined,
    warn: (message: string) => void = () => undefined,
  ) {
    this.writer = new FeedbackWriter(repository, onUnknownTrace, undefined, warn);
  }

  /** Writes the scores already accepted, then takes no more. */
  close(): Promise<void> {
    return this.writer.close();
  }

  /**
   * Validates against the name's config and stores the score (with the scores of concurrent
   * requests: FeedbackWriter); with a token, only for the trace and name the token was made for.
   * Scores for traces not stored yet are kept (late arrival) and reported to `onUnknownTrace` (a
   * /metrics counter). An id already naming a score of another trace or name is refused (CONFLICT).
   */
  async submit(scope: FeedbackScope, input: FeedbackInput, token?: FeedbackTokenClaims): Promise<FeedbackRecord> {
    const record = await this.check(scope, input, token);
    await this.store(scope, record);
    return record;
  }

  /** The score as it will be stored, or the refusal (bad input, a token for another trace or name); stores nothing. */
  async check(scope: FeedbackScope, input: FeedbackInput, token?: FeedbackTokenClaims): Promise<FeedbackRecord> {
    const name = typeof input?.name === 'string' ? input.name.trim() : '';
    const record = validateFeedback(input, name ? await this.repository.scoreConfig(scope.projectId, name) : undefined);
    if (token && (token.traceId !== record.traceId || token.name !== record.name)) {
      throw new DomainError(ErrorCode.FORBIDDEN, 'this feedback token is for another trace or score name');
    }
    return record;
  }

  /** Stores a score `check` accepted. */
  async store(scope: FeedbackScope, record: FeedbackRecord): Promise<void> {
    await this.writer.add(scope, record);
  }

  /**
   * Changes a live config's bounds or categories. Its type cannot change (stored scores were
   * checked against it): archive it and create a new one instead.
   */
  async updateScoreConfig(
    scope: FeedbackScope,
    input: { name: string; dataType: ScoreType; minValue?: number | null; maxValue?: number | null; categories?: string[] | null },
  ): Promise<ScoreConfig> {
    validateScoreConfig(input);
    const name = input.name.trim();
    const current = await this.repository.scoreConfig(scope.projectId, name);
    if (!current) throw notFound(`the project has no score config named "${name}"`);
    if (current.dataType !== input.dataType)
      throw badInput(`score config "${name}" is ${current.dataType}; its type cannot change: archive it and create a new one`);
    const updated = await this.repository.updateScoreConfig(scope.projectId, name, {
      minValue: input.minValue ?? null,
      maxValue: input.maxValue ?? null,
      categories: input.categories ?? null,
    });
    if (!updated) throw notFound(`the project has no score config named "${name}"`);
    return updated;
  }

  /** Archives a config: its name checks no value any more, and may be given a new config. */
  async archiveScoreConfig(scope: FeedbackScope, name: string): Promise<ScoreConfig> {
    const archived = await this.repository.archiveScoreConfig(scope.projectId, name.trim());
    if (!archived) throw notFound(`the project has no score config named "${name.trim()}"`);
    return archived;
  }

  async createScoreConfig(
    scope: FeedbackScope,
    input: { name: string; dataType: ScoreType; minValue?: number | null; maxValue?: number | null; categories?: string[] | null },
  ): Promise<ScoreConfig> {
    validateScoreConfig(input);
    const created = await this.repository.createScoreConfig(scope, {
      name: input.name.trim(),
      dataType: input.dataType,
      minValue: input.minValue ?? null,
      maxValue: input.maxValue ?? null,
      categories: input.categories ?? null,
    });
    if (!created) throw badInput(`the project already has a score config named "${input.name.trim()}"`);
    return created;
  }

  scoreConfigs(scope: FeedbackScope): Promise<ScoreConfig[]> {
    return this.repository.scoreConfigs(scope.projectId);
  }

  /** The claims of a valid, unexpired feedback token. */
  verifyToken(token: string): FeedbackTokenClaims | undefined {
    return verifyFeedbackToken(token, this.pepper);
  }

  createToken(
    scope: FeedbackScope & { apiKeyId?: string },
    traceId: string,
    name: string,
    ttlSeconds: number,
  ): { token: string; expiresAt: number } {
    const id = traceId.toLowerCase();
    if (!/^[0-9a-f]{32}$/.test(id)) throw badInput('traceId must be 32 hex characters');
    if (!name.trim() || name.length > 100) throw badInput('name must be 1 to 100 characters');
    if (!Number.isInteger(ttlSeconds) || ttlSeconds < 1 || ttlSeconds > MAX_TOKEN_TTL_S)
      throw badInput(`ttlSeconds must be between 1 and ${MAX_TOKEN_TTL_S}`);
    const expiresAt = Math.floor(Date.now() / 1000) + ttlSeconds;
    const claims = {
      tenantId: scope.tenantId,
      projectId: scope.projectId,
      traceId: id,
      name: name.trim(),
      expiresAt,
      ...(scope.apiKeyId ? { apiKeyId: scope.apiKeyId } : {}),
    };
    return { token: signFeedbackToken(claims, this.pepper), expiresAt };
  }
}
