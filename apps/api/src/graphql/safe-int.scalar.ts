import { GraphQLError, GraphQLScalarType, Kind } from 'graphql';
import { ErrorCode } from '@spanforge/errors';

function whole(value: unknown): number | undefined {
  const n = typeof value === 'string' && /^-?\d+$/.test(value) ? Number(value) : value;
  return typeof n === 'number' && Number.isSafeInteger(n) ? n : undefined;
}

/**
 * Token and span counts outgrow GraphQL's Int (32 bits: 2,147,483,647), a month of a busy model's
 * input tokens among them. SafeInt is a whole JSON number up to 2^53 − 1, exact in every JSON
 * client.
 */
export const SafeIntScalar = new GraphQLScalarType({
  name: 'SafeInt',
  description: 'A whole number from −(2^53 − 1) to 2^53 − 1: token and span counts, which outgrow the 32-bit Int.',
  serialize(value) {
    const n = whole(value);
    if (n === undefined) throw new TypeError(`SafeInt cannot represent ${String(value)}`);
    return n;
  },
  parseValue(value) {
    const n = typeof value === 'number' ? whole(value) : undefined;
    if (n === undefined) throw new GraphQLError(`SafeInt must be a whole number up to 2^53 − 1; got ${JSON.stringify(value)}`, { extensions: { code: ErrorCode.BAD_USER_INPUT } });
    return n;
  },
  parseLiteral(ast) {
    const n = ast.kind === Kind.INT ? whole(ast.value) : undefined;
    if (n === undefined) throw new GraphQLError('SafeInt must be a whole number up to 2^53 − 1', { extensions: { code: ErrorCode.BAD_USER_INPUT } });
    return n;
  },
});
