import { DomainError, ErrorCode } from '@spanforge/errors';
import type { PriceOverride } from './price.model';
import { utcDayMs, validatePriceOverrides } from './price-override.validation';

const good: PriceOverride = { id: 'o1', model: 'gpt-4o', inputPerMTok: 2, outputPerMTok: 8 };

function problemsOf(overrides: PriceOverride[]): string {
  try {
    validatePriceOverrides(overrides);
  } catch (error) {
    expect(error).toBeInstanceOf(DomainError);
    expect((error as DomainError).code).toBe(ErrorCode.BAD_USER_INPUT);
    return (error as Error).message;
  }
  throw new Error('expected the overrides to be rejected');
}

describe('validatePriceOverrides', () => {
  it('accepts valid overrides, defaulting provider to any and effectiveFrom to always', () => {
    const [valid] = validatePriceOverrides([good]);
    expect(valid).toMatchObject({ id: 'o1', model: 'gpt-4o', provider: '', effectiveFrom: '1970-01-01', effectiveFromMs: 0 });
  });

  it('accepts a day, a zoned ISO date-time, a Date, and null cache prices (a database row)', () => {
    const at = new Date('2025-03-01T10:00:00Z');
    const valid = validatePriceOverrides([
      { ...good, id: 'a', effectiveFrom: '2025-02-28' },
      { ...good, id: 'b', effectiveFrom: '2025-03-01T08:00:00+02:00' },
      { ...good, id: 'c', effectiveFrom: at, cacheReadPerMTok: null, cacheWritePerMTok: null },
    ]);
    expect(valid.map((v) => v.effectiveFromMs)).toEqual([Date.UTC(2025, 1, 28), Date.UTC(2025, 2, 1, 6), at.getTime()]);
    expect(valid[2].cacheReadPerMTok).toBeUndefined();
  });

  it.each([
    ['a negative price', { inputPerMTok: -1 }, /inputPerMTok must be a number/],
    ['a NaN price', { outputPerMTok: Number.NaN }, /outputPerMTok must be a number .*NaN/],
    ['an infinite price', { cacheReadPerMTok: Number.POSITIVE_INFINITY }, /cacheReadPerMTok/],
    ['a price given as text', { cacheWritePerMTok: '3' as unknown as number }, /cacheWritePerMTok/],
    ['an absurd price', { inputPerMTok: 5e9 }, /between 0 and/],
    ['an impossible day', { effectiveFrom: '2025-02-30' }, /effectiveFrom .*2025-02-30/],
    ['a slashed date', { effectiveFrom: '2025/01/01' }, /effectiveFrom/],
    ['a date-time without zone', { effectiveFrom: '2025-01-01T00:00:00' }, /with a zone/],
    ['an invalid Date', { effectiveFrom: new Date('nope') }, /effectiveFrom/],
    ['an empty model', { model: '  ' }, /model must be a non-empty name/],
    ['a model name too long', { model: 'x'.repeat(201) }, /at most 200/],
    ['an empty alias', { aliases: [''] }, /aliases/],
    ['an empty id', { id: '' }, /id must be a non-empty string/],
  ])('rejects %s', (_name, change, message) => {
    expect(problemsOf([{ ...good, ...change } as PriceOverride])).toMatch(message);
  });

  it('lists every problem of every override in one error, naming the override', () => {
    const message = problemsOf([
      good,
      { ...good, id: 'bad-1', inputPerMTok: -1, effectiveFrom: 'soon' },
      { ...good, id: 'bad-2', outputPerMTok: Number.NaN },
    ]);
    expect(message).toMatch(/price override bad-1: inputPerMTok/);
    expect(message).toMatch(/price override bad-1: effectiveFrom/);
    expect(message).toMatch(/price override bad-2: outputPerMTok/);
    expect(message).not.toMatch(/price override o1/);
  });

  it('rejects two prices for one model, provider and instant', () => {
    expect(problemsOf([good, { ...good, id: 'o2', model: 'GPT-4o' }])).toMatch(/price override o2: another override already sets GPT-4o/);
    expect(validatePriceOverrides([good, { ...good, id: 'o2', provider: 'azure_openai' }])).toHaveLength(2);
  });
});

describe('utcDayMs', () => {
  it('reads a calendar day at 00:00 UTC and refuses impossible ones', () => {
    expect(utcDayMs('2024-02-29')).toBe(Date.UTC(2024, 1, 29));
    expect(utcDayMs('2025-02-29')).toBeNaN();
    expect(utcDayMs('2025-13-01')).toBeNaN();
    expect(utcDayMs('2025-1-01')).toBeNaN();
  });
});
