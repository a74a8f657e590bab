import { DomainError, ErrorCode } from '@spanforge/errors';
import { DEFAULT_POLICY, POLICY_LIMITS, type DataPolicy, type DataPolicyInput } from './data-policy.model';
import { validatePolicy } from './policy.validation';

function problemOf(input: DataPolicyInput): string {
  try {
    validatePolicy(input);
  } catch (error) {
    expect(error).toBeInstanceOf(DomainError);
    expect((error as DomainError).code).toBe(ErrorCode.BAD_USER_INPUT);
    return (error as Error).message;
  }
  throw new Error('expected the policy to be refused');
}

describe('validatePolicy', () => {
  it('gives the default policy for an empty input', () => {
    expect(validatePolicy({})).toEqual(DEFAULT_POLICY);
  });

  it('normalises: detectors in running order without duplicates, duplicate patterns and keys once', () => {
    const policy = validatePolicy({
      retentionDays: 30,
      capture: { inputs: 'HASH', outputs: 'DROP', maxContentBytes: 4096 },
      redaction: {
        detectors: ['PHONE', 'EMAIL', 'PHONE', 'JWT'],
        patterns: ['CUST-\\d+', 'CUST-\\d+', '(?i)secret'],
        dropAttributes: ['http.request.header.*', 'user.email', 'user.email'],
      },
    });
    expect(policy).toEqual({
      retentionDays: 30,
      capture: { inputs: 'HASH', outputs: 'DROP', maxContentBytes: 4096 },
      redaction: {
        detectors: ['JWT', 'EMAIL', 'PHONE'],
        patterns: ['CUST-\\d+', '(?i)secret'],
        dropAttributes: ['http.request.header.*', 'user.email'],
      },
    });
    expect(Object.isFrozen(policy.redaction.patterns)).toBe(true);
  });

  it('keeps the base policy for absent fields and resets null ones to the default', () => {
    const base: DataPolicy = validatePolicy({
      retentionDays: 90,
      capture: { inputs: 'DROP', maxContentBytes: 1024 },
      redaction: { detectors: ['EMAIL'] },
    });
    expect(validatePolicy({ capture: { outputs: 'HASH' } }, base)).toEqual({
      ...base,
      capture: { inputs: 'DROP', outputs: 'HASH', maxContentBytes: 1024 },
    });
    expect(validatePolicy({ retentionDays: null, capture: { maxContentBytes: null }, redaction: null }, base)).toEqual({
      retentionDays: null,
      capture: { inputs: 'DROP', outputs: 'FULL', maxContentBytes: null },
      redaction: DEFAULT_POLICY.redaction,
    });
  });

  it('accepts the bounds themselves', () => {
    const limits = POLICY_LIMITS;
    for (const retentionDays of [limits.minRetentionDays, limits.maxRetentionDays])
      expect(validatePolicy({ retentionDays }).retentionDays).toBe(retentionDays);
    for (const maxContentBytes of [limits.minContentBytes, limits.maxContentBytes]) {
      expect(validatePolicy({ capture: { maxContentBytes } }).capture.maxContentBytes).toBe(maxContentBytes);
    }
    const patterns = Array.from({ length: limits.maxPatterns }, (_, i) =>
      `p${i}-${'x'.repeat(limits.maxPatternLength - 5)}`.slice(0, limits.maxPatternLength),
    );
    expect(validatePolicy({ redaction: { patterns } }).redaction.patterns).toHaveLength(limits.maxPatterns);
  });

  it.each([
    [
      'retentionDays 0',
      { retentionDays: 0 },
      'retentionDays must be a whole number of days from 1 to 3650 (or null to keep data until erased), got 0',
    ],
    ['retentionDays 3651', { retentionDays: 3651 }, 'got 3651'],
    ['fractional retentionDays', { retentionDays: 1.5 }, 'got 1.5'],
    [
      'maxContentBytes under 256',
      { capture: { maxContentBytes: 255 } },
      'capture.maxContentBytes must be a whole number of bytes from 256 to 16777216 (or null for no cap), got 255',
    ],
    ['maxContentBytes over 16 MiB', { capture: { maxContentBytes: 16 * 1024 * 1024 + 1 } }, 'got 16777217'],
    ['an unknown capture mode', { capture: { inputs: 'KEEP' } }, 'capture.inputs "KEEP" is not a capture mode; use FULL, HASH, DROP'],
    [
      'an unknown detector',
      { redaction: { detectors: ['EMAIL', 'SSN'] } },
      'redaction.detectors[1] "SSN" is not a detector; known: JWT, API_KEY, EMAIL, CREDIT_CARD, IP_ADDRESS, PHONE',
    ],
    [
      'a pattern that is not RE2',
      { redaction: { patterns: ['ok', '(?<=a)b'] } },
      'redaction.patterns[1] "(?<=a)b" is not valid RE2 syntax',
    ],
    ['a pattern that is too long', { redaction: { patterns: ['y'.repeat(300)] } }, 'is 300 characters long; at most 256 are allowed'],
    [
      'too many patterns',
      { redaction: { patterns: Array.from({ length: 21 }, (_, i) => `p${i}`) } },
      'redaction.patterns has 21 patterns; at most 20 are allowed',
    ],
    ['a pattern matching nothing at all', { redaction: { patterns: ['x*'] } }, 'redaction.patterns[0] "x*" matches the empty string'],
    [
      'a star inside a key',
      { redaction: { dropAttributes: ['a.*.b'] } },
      `redaction.dropAttributes[0] "a.*.b": '*' is allowed only as a final '.*'`,
    ],
    ['a star without a prefix', { redaction: { dropAttributes: ['.*'] } }, `redaction.dropAttributes[0] ".*": '*' is allowed only`],
    ['an empty key', { redaction: { dropAttributes: [''] } }, 'redaction.dropAttributes[0] must be a non-empty key, got ""'],
    [
      'too many keys',
      { redaction: { dropAttributes: Array.from({ length: 101 }, (_, i) => `k${i}`) } },
      'redaction.dropAttributes has 101 keys; at most 100 are allowed',
    ],
    [
      'a list that is not one',
      { redaction: { patterns: 'secret' as unknown as string[] } },
      'redaction.patterns must be a list, got "secret"',
    ],
  ])('refuses %s, naming the value', (_, input, message) => {
    expect(problemOf(input as DataPolicyInput)).toContain(message);
  });

  it('names every problem in one message', () => {
    const message = problemOf({ retentionDays: -1, redaction: { detectors: ['NOPE'] as never, patterns: ['('] } });
    expect(message).toMatch(
      /^invalid data policy: retentionDays .*got -1; .*"NOPE" is not a detector.*; redaction.patterns\[0\] "\(" is not valid RE2 syntax/,
    );
  });
});
