import { GraphQLError, Kind } from 'graphql';
import { SafeIntScalar } from './safe-int.scalar';

describe('SafeInt scalar', () => {
  it('writes whole numbers beyond 32 bits, up to 2^53 − 1, as JSON numbers', () => {
    expect(SafeIntScalar.serialize(3_000_000_000)).toBe(3_000_000_000);
    expect(SafeIntScalar.serialize(Number.MAX_SAFE_INTEGER)).toBe(Number.MAX_SAFE_INTEGER);
    // ClickHouse quotes 64-bit integers unless told not to: a digit string is the same number.
    expect(SafeIntScalar.serialize('4294967296')).toBe(4_294_967_296);
  });

  it.each([['a fraction', 1.5], ['past 2^53', 2 ** 53], ['text', '12 tokens'], ['nothing', null]])('refuses to write %s', (_what, value) => {
    expect(() => SafeIntScalar.serialize(value)).toThrow(/SafeInt cannot represent/);
  });

  it('reads whole numbers, and refuses anything else as BAD_USER_INPUT', () => {
    expect(SafeIntScalar.parseValue(5_000_000_000)).toBe(5_000_000_000);
    expect(SafeIntScalar.parseLiteral({ kind: Kind.INT, value: '5000000000' })).toBe(5_000_000_000);
    for (const bad of [() => SafeIntScalar.parseValue('5'), () => SafeIntScalar.parseValue(0.5), () => SafeIntScalar.parseLiteral({ kind: Kind.FLOAT, value: '1.5' })]) {
      expect(bad).toThrow(GraphQLError);
    }
  });
});
