import { UNREADABLE_ID, base64Of, bytesOfBase64, hexOf, idOfJson } from './binary-text.codec';
import { int64Value } from './wire.reader';

describe('hex and base64', () => {
  let seed = 99;
  const randomBytes = (length: number) => Uint8Array.from({ length }, () => (seed = (Math.imul(seed, 1103515245) + 12345) >>> 0) >>> 24);

  it('writes the same hex and base64 as Node for every length up to 64 bytes', () => {
    for (let length = 0; length <= 64; length++) {
      const bytes = randomBytes(length);
      expect(hexOf(bytes, 0, length)).toBe(Buffer.from(bytes).toString('hex'));
      expect(base64Of(bytes)).toBe(Buffer.from(bytes).toString('base64'));
      expect(bytesOfBase64(Buffer.from(bytes).toString('base64'))).toEqual(bytes);
      expect(bytesOfBase64(Buffer.from(bytes).toString('base64url'))).toEqual(bytes);
    }
  });

  it('reads a slice of a larger buffer', () => {
    const bytes = Uint8Array.of(1, 0xab, 0xcd, 2);

    expect(hexOf(bytes, 1, 3)).toBe('abcd');
    expect(base64Of(bytes, 1, 3)).toBe(Buffer.from([0xab, 0xcd]).toString('base64'));
  });

  it('does not turn ids longer than 64 bytes into hex', () => {
    expect(hexOf(new Uint8Array(65), 0, 65)).toBe(UNREADABLE_ID);
  });

  it.each(['abc$', 'a', '====', 'ab=c', 'é'])('refuses %j as base64', (text) => {
    expect(bytesOfBase64(text)).toBeUndefined();
  });
});

describe('idOfJson', () => {
  const traceHex = '5b8efff798038103d269b633813fc60c';
  const spanHex = 'eee19b7ec3c1b174';

  it.each([
    ['lower-case hex', traceHex, 16, traceHex],
    ['upper-case hex', traceHex.toUpperCase(), 16, traceHex],
    ['base64', Buffer.from(traceHex, 'hex').toString('base64'), 16, traceHex],
    ['unpadded base64url', Buffer.from(spanHex, 'hex').toString('base64url'), 8, spanHex],
    ['padded base64 span id', Buffer.from(spanHex, 'hex').toString('base64'), 8, spanHex],
    ['a byte array', [...Buffer.from(spanHex, 'hex')], 8, spanHex],
    ['absent', undefined, 8, ''],
    ['empty', '', 16, ''],
    ['hex of the wrong length', traceHex.slice(2), 16, UNREADABLE_ID],
    ['32 characters that are not hex', 'z'.repeat(32), 16, UNREADABLE_ID],
    ['24 characters that are not base64', '!'.repeat(24), 16, UNREADABLE_ID],
    ['a number', 12345, 8, UNREADABLE_ID],
    ['a byte array with a non-byte', [1, 2, 3, 4, 5, 6, 7, 256], 8, UNREADABLE_ID],
  ])('reads %s', (_case, value, byteLength, expected) => {
    expect(idOfJson(value, byteLength)).toBe(expected);
  });
});

describe('int64Value', () => {
  it.each([
    [0, 0, 0],
    [0xffffffff, -1, -1],
    [0xffffffff, 0x1fffff, Number.MAX_SAFE_INTEGER],
    [1, -0x200000, Number.MIN_SAFE_INTEGER],
    [0, 0x200000, '9007199254740992'],
    [0, -0x200000, '-9007199254740992'],
    [0xffffffff, 0x7fffffff, '9223372036854775807'],
    [0, -0x80000000, '-9223372036854775808'],
  ])('joins low %d and high %d into %p', (low, high, expected) => {
    expect(int64Value(low, high)).toBe(expected);
  });
});
