import { Catch, type ArgumentsHost } from '@nestjs/common';
import type { GqlExceptionFilter } from '@nestjs/graphql';
import type { FastifyReply } from 'fastify';
import type { Logger } from '@spanforge/runtime';
import { sendFailure } from './rest-errors';

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
  constructor(private readonly log: Pick<Logger, 'error'>) {}

  catch(exception: unknown, host: ArgumentsHost): unknown {
    if (host.getType<string>() !== 'http') return exception;
    return sendFailure(host.switchToHttp().getResponse<FastifyReply>(), exception, this.log);
  }
}
