import { GraphQLError } from 'graphql';
import { defaultErrorFormatter, type MercuriusContext } from 'mercurius';
import { DomainError, ErrorCode } from '@spanforge/errors';
import type { Logger } from '@spanforge/runtime';

type Execution = Parameters<typeof defaultErrorFormatter>[0];

/**
 * The one place GraphQL errors get their `extensions.code`. Domain errors keep their message;
 * anything unexpected becomes INTERNAL with a generic message (the cause goes to the log only),
 * execution failures without a code too; parse and validation failures are BAD_USER_INPUT.
 */
export function graphqlErrorFormatter(log: Logger) {
  return (execution: Execution, context: MercuriusContext) => {
    // Mercurius wraps parse/validation failures in one error holding the real ones.
    const flat = (execution.errors ?? []).flatMap((error) => {
      const inner = (error.originalError as { errors?: unknown } | undefined)?.errors;
      return Array.isArray(inner) ? inner.filter((e): e is GraphQLError => e instanceof GraphQLError) : [error];
    });
    const errors = flat.map((error) => {
      const original = error.originalError;
      if (original instanceof DomainError) return withCode(error, original.message, original.code);
      if (isRequestError(original)) return withCode(error, requestErrorMessage(original), ErrorCode.BAD_USER_INPUT);
      if (original && !(original instanceof GraphQLError)) {
        log.error(`GraphQL resolver failed at ${error.path?.join('.') ?? '?'}`, original);
        return withCode(error, 'internal error', ErrorCode.INTERNAL);
      }
      if (typeof error.extensions?.code === 'string') return error;
      // An uncoded error with a path happened while executing (a value no scalar can write, a
      // null for a non-null field): the server's fault, not the request's.
      if (error.path) {
        log.error(`GraphQL execution failed at ${error.path.join('.')}: ${error.message}`);
        return withCode(error, 'internal error', ErrorCode.INTERNAL);
      }
      return withCode(error, error.message, ErrorCode.BAD_USER_INPUT);
    });
    return defaultErrorFormatter({ ...execution, errors } as Execution, context);
  };
}

/** A refusal of the request itself by Mercurius or Fastify (no query, a body that is not JSON, too large): the caller's to fix. */
function isRequestError(error: Error | undefined): error is Error & { code: string; statusCode: number } {
  const { code, statusCode } = (error ?? {}) as { code?: unknown; statusCode?: unknown };
  return (
    typeof code === 'string' && /^(MER|FST)_ERR_/.test(code) && typeof statusCode === 'number' && statusCode >= 400 && statusCode < 500
  );
}

function requestErrorMessage(error: Error & { code: string }): string {
  if (error.code === 'MER_ERR_GQL_PERSISTED_QUERY_NOT_FOUND' && error.message === 'Unknown query') {
    return 'the request has no query: POST a JSON body such as {"query": "{ traces { totalCount } }", "variables": {}}';
  }
  return error.message;
}

function withCode(error: GraphQLError, message: string, code: string): GraphQLError {
  return new GraphQLError(message, {
    nodes: error.nodes,
    source: error.source,
    positions: error.positions,
    path: error.path,
    extensions: { ...error.extensions, code },
  });
}
