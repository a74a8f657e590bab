import { Catch, HttpException, type ArgumentsHost } from '@nestjs/common';
import type { GqlExceptionFilter } from '@nestjs/graphql';
import type { FastifyReply } from 'fastify';
import { DomainError, ErrorCode } from '@spanforge/errors';
import { codeOfStatus, sendError } from './rest-errors';

/**
 * GraphQL: hands every resolver error back untouched, where graphqlErrorFormatter maps it once.
 * Without it Nest logs each expected refusal (a wrong key, bad input) as an ERROR with a stack.
 *
 * REST: answers in the one REST error shape, `{ "error": { "code", "message" } }`, also for what
 * Fastify or Nest refuse before a controller runs (a body that is not JSON, one too large, an unknown
 * route). Anything else is INTERNAL with a generic message; the cause goes to the log only.
 */
@Catch()
export class ApiExceptionFilter implements GqlExceptionFilter {
  constructor(private readonly logError: (message: string, error: unknown) => void = () => undefined) {}

  catch(exception: unknown, host: ArgumentsHost): unknown {
    if (host.getType<string>() !== 'http') return exception;
    const reply = host.switchToHttp().getResponse<FastifyReply>();
    if (exception instanceof DomainError) return sendError(reply, exception.code, exception.message);
    const status = exception instanceof HttpException ? exception.getStatus() : (exception as { statusCode?: unknown }).statusCode;
    if (typeof status === 'number' && status >= 400 && status < 500) {
      const message = exception instanceof HttpException ? httpMessage(exception) : (exception as Error).message;
      return sendError(reply, codeOfStatus(status), message);
    }
    this.logError('REST request failed', exception);
    return sendError(reply, ErrorCode.INTERNAL, 'internal error');
  }
}

function httpMessage(exception: HttpException): string {
  const response = exception.getResponse();
  if (typeof response === 'string') return response;
  const message = (response as { message?: unknown }).message;
  return Array.isArray(message) ? message.join('; ') : typeof message === 'string' ? message : exception.message;
}
