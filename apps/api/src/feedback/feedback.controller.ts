import { Body, Controller, Post, Req, Res } from '@nestjs/common';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { DomainError, ErrorCode, RateLimitedError } from '@spanforge/errors';
import { FeedbackService, isFeedbackToken, type FeedbackInput } from '@spanforge/feedback';
import { ApiKeyScope, ApiKeyVerifier, Authenticator, credentialFrom, projectWithScope } from '@spanforge/tenancy';
import { FeedbackAccess } from '../auth/access.decorators';
import { callerOf } from '../auth/access.guard';
import { ProjectLimiter } from '../auth/project-limiter';

/**
 * `POST /v1/feedback` with a project key that has INGEST, or with a feedback token made by
 * createFeedbackToken (for one trace and score name, until it expires) so a browser never holds
 * the project's secret. 202 `{ id }`.
 */
/**
 * Scores a second per project (an app backend posting for its users) and per feedback token (one
 * person's thumbs on one trace, from a public page: a leaked token must not become a firehose).
 */
export const FEEDBACK_PER_PROJECT_PER_SECOND = 200;
export const FEEDBACK_PER_TOKEN_PER_SECOND = 1;

@Controller('v1/feedback')
export class FeedbackController {
  private readonly perProject = new ProjectLimiter({
    requestsPerSecond: FEEDBACK_PER_PROJECT_PER_SECOND,
    concurrentRequests: Number.MAX_SAFE_INTEGER,
  });
  private readonly perToken = new ProjectLimiter({
    requestsPerSecond: FEEDBACK_PER_TOKEN_PER_SECOND,
    concurrentRequests: Number.MAX_SAFE_INTEGER,
  });

  constructor(
    private readonly feedback: FeedbackService,
    private readonly keys: ApiKeyVerifier,
    private readonly authenticator: Authenticator,
  ) {}

  @FeedbackAccess()
  @Post()
  async submit(@Body() body: FeedbackInput, @Req() request: FastifyRequest, @Res() reply: FastifyReply): Promise<void> {
    const bearer = credentialFrom(request.headers.authorization, request.headers['x-api-key']);
    // Refusals are thrown: ApiExceptionFilter answers them in the REST error shape.
    let scope;
    let token;
    if (isFeedbackToken(bearer)) {
      token = this.feedback.verifyToken(bearer);
      if (!token) throw new DomainError(ErrorCode.UNAUTHENTICATED, 'the feedback token is invalid or has expired');
      if (token.apiKeyId && !(await this.keys.isActive(token.apiKeyId))) {
        throw new DomainError(ErrorCode.UNAUTHENTICATED, 'the API key that made this feedback token was revoked or has expired');
      }
      scope = { tenantId: token.tenantId, projectId: token.projectId };
    } else {
      const caller = await callerOf(request, this.authenticator);
      if (caller.kind !== 'project')
        throw new DomainError(ErrorCode.UNAUTHENTICATED, 'a valid project API key or feedback token is required');
      scope = projectWithScope(caller, ApiKeyScope.INGEST);
    }
    const record = await this.feedback.check(scope, body ?? ({} as FeedbackInput), token);
    // Counted once a post is one that would be stored: a refused one costs nothing to keep refusing.
    admit(this.perProject, scope.projectId, `this project is over ${FEEDBACK_PER_PROJECT_PER_SECOND} feedback posts a second`);
    if (token) admit(this.perToken, bearer!, `this feedback token is over ${FEEDBACK_PER_TOKEN_PER_SECOND} post a second`);
    await this.feedback.store(scope, record);
    await reply.status(202).send({ id: record.id });
  }
}

/** Takes one post from the key's rate, or refuses with when to come back (429 + Retry-After). */
function admit(limiter: ProjectLimiter, key: string, message: string): void {
  const admission = limiter.admit(key);
  if (!admission.admitted) throw new RateLimitedError(message, admission.retryAfterSeconds);
  // Only the rate counts here: a post holds nothing while it is written.
  admission.release();
}
