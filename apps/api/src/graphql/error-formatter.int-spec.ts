// Loads mercurius (ESM dependencies), so it runs with the integration tests' ESM support; it starts nothing.
import { GraphQLError } from 'graphql';
import type { MercuriusContext } from 'mercurius';
import { DomainError, ErrorCode } from '@spanforge/errors';
import type { Logger } from '@spanforge/runtime';
import { graphqlErrorFormatter } from './error-formatter';

function format(errors: GraphQLError[]) {
  const logged: Array<{ message: string; error: unknown }> = [];
  const log = { error: (message: string, error?: unknown) => logged.push({ message, error }) } as unknown as Logger;
  const quiet = { info: () => undefined };
  const { response } = graphqlErrorFormatter(log)({ data: null, errors } as never, { app: { log: quiet } } as unknown as MercuriusContext);
  return { errors: (response as { errors: Array<{ message: string; extensions: { code: string } }> }).errors, logged };
}

describe('graphqlErrorFormatter', () => {
  it('turns an unexpected failure into INTERNAL with a generic message, and logs the cause only', () => {
    const cause = new Error('connect ECONNREFUSED 127.0.0.1:8123 (password=hunter2)');
    const { errors, logged } = format([new GraphQLError(cause.message, { path: ['traces'], originalError: cause })]);
    expect(errors).toEqual([expect.objectContaining({ message: 'internal error', extensions: { code: ErrorCode.INTERNAL } })]);
    expect(JSON.stringify(errors)).not.toContain('ECONNREFUSED');
    expect(JSON.stringify(errors)).not.toContain('hunter2');
    expect(logged).toEqual([{ message: 'GraphQL resolver failed at traces', error: cause }]);
  });

  it('codes an uncoded failure during execution (a value a scalar cannot write) INTERNAL', () => {
    const serialization = new GraphQLError('Int cannot represent non 32-bit signed integer value: 6000000000');
    const { errors, logged } = format([
      new GraphQLError(serialization.message, { path: ['trace', 'inputTokens'], originalError: serialization }),
    ]);
    expect(errors).toEqual([expect.objectContaining({ message: 'internal error', extensions: { code: ErrorCode.INTERNAL } })]);
    expect(logged.map((l) => l.message)).toEqual([
      'GraphQL execution failed at trace.inputTokens: Int cannot represent non 32-bit signed integer value: 6000000000',
    ]);
  });

  it("keeps a domain error's message and code", () => {
    const refused = new DomainError(ErrorCode.FORBIDDEN, 'this feedback token is for another trace or score name');
    const { errors, logged } = format([new GraphQLError(refused.message, { originalError: refused })]);
    expect(errors).toEqual([expect.objectContaining({ message: refused.message, extensions: { code: ErrorCode.FORBIDDEN } })]);
    expect(logged).toEqual([]);
  });

  it('codes parse and validation failures BAD_USER_INPUT, unwrapping the ones Mercurius gathers into one', () => {
    const inner = [
      new GraphQLError('Cannot query field "nope" on type "Query".'),
      new GraphQLError('Syntax Error: Expected Name, found "}".'),
    ];
    const wrapper = new GraphQLError('Graphql validation error', {
      originalError: Object.assign(new Error('Graphql validation error'), { errors: inner }),
    });
    const { errors } = format([wrapper]);
    expect(errors.map((e) => [e.message, e.extensions.code])).toEqual(inner.map((e) => [e.message, ErrorCode.BAD_USER_INPUT]));
  });

  it('codes a request Mercurius or Fastify refused (no query, a body too large) BAD_USER_INPUT, saying what to send', () => {
    const noQuery = Object.assign(new Error('Unknown query'), { code: 'MER_ERR_GQL_PERSISTED_QUERY_NOT_FOUND', statusCode: 400 });
    const tooLarge = Object.assign(new Error('Request body is too large'), { code: 'FST_ERR_CTP_BODY_TOO_LARGE', statusCode: 413 });
    const { errors, logged } = format([
      new GraphQLError(noQuery.message, { originalError: noQuery }),
      new GraphQLError(tooLarge.message, { originalError: tooLarge }),
    ]);
    expect(errors.map((e) => e.extensions.code)).toEqual([ErrorCode.BAD_USER_INPUT, ErrorCode.BAD_USER_INPUT]);
    expect(errors[0]!.message).toMatch(/has no query: POST a JSON body such as \{"query"/);
    expect(errors[1]!.message).toBe('Request body is too large');
    expect(logged).toEqual([]);
  });
});
