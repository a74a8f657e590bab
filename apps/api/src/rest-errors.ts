import { HttpException } from '@nestjs/common';
import type { FastifyReply } from 'fastify';
import { DomainError, ErrorCode, HTTP_STATUS, RateLimitedError } from '@spanforge/errors';
import type { Logger } from '@spanforge/runtime';

/** One shape for every REST refusal: `{ "error": { "code", "message" } }`, the codes GraphQL uses. */
async function sendError(reply: FastifyReply, code: ErrorCode, message: string, retryAfterSeconds?: number): Promise<void> {
  if (retryAfterSeconds !== undefined) void reply.header('retry-after', String(retryAfterSeconds));
  else if (code === ErrorCode.UNAVAILABLE) void reply.header('retry-after', '1');
  await reply.status(HTTP_STATUS[code]).send({ error: { code, message } });
}

/**
 * Answers any failure of a REST request: a domain error with its code; what Fastify or Nest refused
 * (a body that is not JSON, one too large, an unknown route: a 4xx status) as what it is; anything
 * else as INTERNAL with a generic message, the cause to the log only.
 */
export function sendFailure(reply: FastifyReply, failure: unknown, log: Pick<Logger, 'error'>): Promise<void> {
  if (failure instanceof RateLimitedError) return sendError(reply, failure.code, failure.message, failure.retryAfterSeconds);
  if (failure instanceof DomainError) return sendError(reply, failure.code, failure.message);
  const status = failure instanceof HttpException ? failure.getStatus() : (failure as { statusCode?: unknown } | undefined)?.statusCode;
  if (typeof status === 'number' && status >= 400 && status < 500) {
    return sendError(reply, codeOfStatus(status), failure instanceof HttpException ? httpMessage(failure) : (failure as Error).message);
  }
  log.error('REST request failed', failure);
  return sendError(reply, ErrorCode.INTERNAL, 'internal error');
}

function httpMessage(exception: HttpException): string {
  const response = exception.getResponse();
  if (typeof response === 'string') return response;
  const message = (response as { message?: unknown }).message;
  return Array.isArray(message) ? message.join('; ') : typeof message === 'string' ? message : exception.message;
}

/** The code of a 4xx status a framework gave a refused request (a body that is not JSON, too large, a route that does not exist). */
function codeOfStatus(status: number): ErrorCode {
  return STATUS_CODES[status] ?? ErrorCode.BAD_USER_INPUT;
}

const STATUS_CODES: Record<number, ErrorCode> = {
  401: ErrorCode.UNAUTHENTICATED,
  403: ErrorCode.FORBIDDEN,
  404: ErrorCode.NOT_FOUND,
  429: ErrorCode.RATE_LIMITED,
};
