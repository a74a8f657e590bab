import { Body, Controller, Inject, Post, Req, Res } from '@nestjs/common';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { DomainError, ErrorCode } from '@spanforge/errors';
import { isFeedbackToken, type FeedbackInput } from '@spanforge/feedback';
import type { Infrastructure } from '@spanforge/runtime';
import { ApiKeyScope, credentialFrom, projectWithScope } from '@spanforge/tenancy';
import { FeedbackAccess } from '../auth/access.decorators';
import { callerOf } from '../auth/access.guard';
import { INFRASTRUCTURE } from '../infrastructure.token';

/**
 * `POST /v1/feedback` with a project key that has INGEST, or with a feedback token made by
 * createFeedbackToken (for one trace and score name, until it expires) so a browser never holds
 * the project's secret. 202 `{ id }`.
 */
@Controller('v1/feedback')
export class FeedbackController {
  constructor(@Inject(INFRASTRUCTURE) private readonly infra: Infrastructure) {}

  @FeedbackAccess()
  @Post()
  async submit(@Body() body: FeedbackInput, @Req() request: FastifyRequest, @Res() reply: FastifyReply): Promise<void> {
    const bearer = credentialFrom(request.headers.authorization, request.headers['x-api-key']);
    // Refusals are thrown: ApiExceptionFilter answers them in the REST error shape.
    let scope;
    let token;
    if (isFeedbackToken(bearer)) {
      token = this.infra.feedback.verifyToken(bearer);
      if (!token) throw new DomainError(ErrorCode.UNAUTHENTICATED, 'the feedback token is invalid or has expired');
      scope = { tenantId: token.tenantId, projectId: token.projectId };
    } else {
      const caller = await callerOf(request, this.infra);
      if (caller.kind !== 'project') throw new DomainError(ErrorCode.UNAUTHENTICATED, 'a valid project API key or feedback token is required');
      scope = projectWithScope(caller, ApiKeyScope.INGEST);
    }
    const record = await this.infra.feedback.submit(scope, body ?? ({} as FeedbackInput), token);
    await reply.status(202).send({ id: record.id });
  }
}
