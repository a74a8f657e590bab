/**
 * Domain errors carry a code; each transport maps codes once: to HTTP/OTLP status in the gateway,
 * to GraphQL `extensions.code` in the api, to retry or discard in workers.
 */
export enum ErrorCode {
  UNAUTHENTICATED = 'UNAUTHENTICATED',
  FORBIDDEN = 'FORBIDDEN',
  BAD_USER_INPUT = 'BAD_USER_INPUT',
  NOT_FOUND = 'NOT_FOUND',
  /** The request contradicts what is stored (a score id already used for another trace or name). */
  CONFLICT = 'CONFLICT',
  QUERY_TOO_EXPENSIVE = 'QUERY_TOO_EXPENSIVE',
  RATE_LIMITED = 'RATE_LIMITED',
  UNAVAILABLE = 'UNAVAILABLE',
  INTERNAL = 'INTERNAL',
}

export class DomainError extends Error {
  constructor(
    readonly code: ErrorCode,
    message: string,
  ) {
    super(message);
    this.name = 'DomainError';
  }
}

export const unauthenticated = (message = 'a valid API key is required') => new DomainError(ErrorCode.UNAUTHENTICATED, message);
export const badInput = (message: string) => new DomainError(ErrorCode.BAD_USER_INPUT, message);
export const notFound = (message: string) => new DomainError(ErrorCode.NOT_FOUND, message);

/** Over a rate or share: the caller may try again after `retryAfterSeconds` (Retry-After, extensions.retryAfterSeconds). */
export class RateLimitedError extends DomainError {
  constructor(
    message: string,
    readonly retryAfterSeconds: number,
  ) {
    super(ErrorCode.RATE_LIMITED, message);
    this.name = 'RateLimitedError';
  }
}

/** The HTTP status of each code, on every REST endpoint (the api's and the gateway's). */
export const HTTP_STATUS: Readonly<Record<ErrorCode, number>> = {
  [ErrorCode.BAD_USER_INPUT]: 400,
  [ErrorCode.UNAUTHENTICATED]: 401,
  [ErrorCode.FORBIDDEN]: 403,
  [ErrorCode.NOT_FOUND]: 404,
  [ErrorCode.CONFLICT]: 409,
  [ErrorCode.QUERY_TOO_EXPENSIVE]: 422,
  [ErrorCode.RATE_LIMITED]: 429,
  [ErrorCode.INTERNAL]: 500,
  [ErrorCode.UNAVAILABLE]: 503,
};
