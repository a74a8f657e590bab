import { GraphQLError, Kind } from 'graphql';
import { SafeIntScalar } from './safe-int.scalar';

describe('SafeInt scalar', () => {
  it('writes whole numbers beyond 32 bits, up to 2^53 − 1, as JSON numbers', () => {
    expect(SafeIntScalar.serialize(3_000_000_000)).toBe(3_000_000_000);
    expect(SafeIntScalar.serialize(Number.MAX_SAFE_INTEGER)).toBe(Number.MAX_SAFE_INTEGER);
    // ClickHouse quotes 64-bit integers unless told not to: a digit string is the same number.
    expect(SafeIntScalar.serialize('4294967296')).toBe(4_294_967_296);
  });

  it('saturates whole numbers past 2^53 − 1 instead of failing the answer', () => {
    expect(SafeIntScalar.serialize(2 ** 53)).toBe(Number.MAX_SAFE_INTEGER);
    expect(SafeIntScalar.serialize('9007199254741556')).toBe(Number.MAX_SAFE_INTEGER);
    expect(SafeIntScalar.serialize('18446744073709551615')).toBe(Number.MAX_SAFE_INTEGER);
    expect(SafeIntScalar.serialize(-(2 ** 60))).toBe(-Number.MAX_SAFE_INTEGER);
  });

  it.each([
    ['a fraction', 1.5],
    ['text', '12 tokens'],
    ['nothing', null],
  ])('refuses to write %s', (_what, value) => {
    expect(() => SafeIntScalar.serialize(value)).toThrow(/SafeInt cannot represent/);
  });

  it('reads whole numbers, and refuses anything else as BAD_USER_INPUT', () => {
    expect(SafeIntScalar.parseValue(5_000_000_000)).toBe(5_000_000_000);
    expect(SafeIntScalar.parseLiteral({ kind: Kind.INT, value: '5000000000' })).toBe(5_000_000_000);
    for (const bad of [
      () => SafeIntScalar.parseValue('5'),
      () => SafeIntScalar.parseValue(0.5),
      () => SafeIntScalar.parseLiteral({ kind: Kind.FLOAT, value: '1.5' }),
    ]) {
      expect(bad).toThrow(GraphQLError);
    }
  });
});
