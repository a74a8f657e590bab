import type { FastifyReply } from 'fastify';
import { ErrorCode } from '@spanforge/errors';

/** The HTTP status of each error code on the API's REST endpoints. */
export const HTTP_STATUS: Record<ErrorCode, number> = {
  [ErrorCode.BAD_USER_INPUT]: 400,
  [ErrorCode.UNAUTHENTICATED]: 401,
  [ErrorCode.FORBIDDEN]: 403,
  [ErrorCode.NOT_FOUND]: 404,
  [ErrorCode.QUERY_TOO_EXPENSIVE]: 422,
  [ErrorCode.RATE_LIMITED]: 429,
  [ErrorCode.INTERNAL]: 500,
  [ErrorCode.UNAVAILABLE]: 503,
};

/** One shape for every REST refusal: `{ "error": { "code", "message" } }`, the codes GraphQL uses. */
export async function sendError(reply: FastifyReply, code: ErrorCode, message: string): Promise<void> {
  if (code === ErrorCode.UNAVAILABLE) void reply.header('retry-after', '1');
  await reply.status(HTTP_STATUS[code]).send({ error: { code, message } });
}

/** The code of an HTTP status a framework gave a refused request (a body that is not JSON, too large, a route that does not exist). */
export function codeOfStatus(status: number): ErrorCode {
  if (status === 401) return ErrorCode.UNAUTHENTICATED;
  if (status === 403) return ErrorCode.FORBIDDEN;
  if (status === 404) return ErrorCode.NOT_FOUND;
  if (status === 429) return ErrorCode.RATE_LIMITED;
  if (status >= 400 && status < 500) return ErrorCode.BAD_USER_INPUT;
  return ErrorCode.INTERNAL;
}
