import { GraphQLError, GraphQLScalarType, Kind } from 'graphql';
import { ErrorCode } from '@spanforge/errors';

function whole(value: unknown): number | undefined {
  const n = typeof value === 'string' && /^-?\d+$/.test(value) ? Number(value) : value;
  return typeof n === 'number' && Number.isSafeInteger(n) ? n : undefined;
}

/** A whole count past 2^53 − 1, as ClickHouse answers a UInt64 sum (a digit string) or a number. */
function pastSafe(value: unknown): number | undefined {
  if (typeof value === 'string' && /^-?\d+$/.test(value)) return value.startsWith('-') ? -Number.MAX_SAFE_INTEGER : Number.MAX_SAFE_INTEGER;
  if (typeof value === 'number' && Number.isInteger(value)) return value < 0 ? -Number.MAX_SAFE_INTEGER : Number.MAX_SAFE_INTEGER;
  return undefined;
}

/**
 * Token and span counts outgrow GraphQL's Int (32 bits: 2,147,483,647), a month of a busy model's
 * input tokens among them. SafeInt is a whole JSON number up to 2^53 − 1, exact in every JSON
 * client. A sum past that saturates at 2^53 − 1 rather than failing the answer: one project's
 * absurd token counts must not turn its dashboards into errors.
 */
export const SafeIntScalar = new GraphQLScalarType({
  name: 'SafeInt',
  description:
    'A whole number from −(2^53 − 1) to 2^53 − 1: token and span counts, which outgrow the 32-bit Int. A count past 2^53 − 1 saturates: it is answered as 2^53 − 1 (9007199254740991).',
  serialize(value) {
    const n = whole(value) ?? pastSafe(value);
    if (n === undefined) throw new TypeError(`SafeInt cannot represent ${String(value)}`);
    return n;
  },
  parseValue(value) {
    const n = typeof value === 'number' ? whole(value) : undefined;
    if (n === undefined)
      throw new GraphQLError(`SafeInt must be a whole number up to 2^53 − 1; got ${JSON.stringify(value)}`, {
        extensions: { code: ErrorCode.BAD_USER_INPUT },
      });
    return n;
  },
  parseLiteral(ast) {
    const n = ast.kind === Kind.INT ? whole(ast.value) : undefined;
    if (n === undefined)
      throw new GraphQLError('SafeInt must be a whole number up to 2^53 − 1', { extensions: { code: ErrorCode.BAD_USER_INPUT } });
    return n;
  },
});
