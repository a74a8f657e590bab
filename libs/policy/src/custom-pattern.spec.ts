import { compilePattern, CustomPatterns } from './custom-pattern';

const MARKER = '[REDACTED:PATTERN]';

function redact(patterns: string[], text: string): { text: string; count: number } {
  const tally = { redactions: 0 };
  return { text: new CustomPatterns(patterns).redact(text, tally), count: tally.redactions };
}

describe('custom patterns', () => {
  it('replaces every match of every pattern and counts them', () => {
    const text = 'customer CUST-123456 asked about CUST-654321 and project Falcon';
    expect(redact(['CUST-\\d{6}', '(?i)falcon'], text)).toEqual({
      text: `customer ${MARKER} asked about ${MARKER} and project ${MARKER}`,
      count: 3,
    });
  });

  it('takes RE2 syntax: inline flags, classes, named groups, word boundaries', () => {
    const text = 'Ticket ab123456 and AB654321, not xab123456';
    expect(redact(['(?i)\\b(?P<prefix>[a-z]{2})\\d{6}\\b'], text)).toEqual({
      text: `Ticket ${MARKER} and ${MARKER}, not xab123456`,
      count: 2,
    });
  });

  it('replaces nothing where a pattern matches the empty string inside a text', () => {
    expect(redact(['\\bx*'], 'ab xx')).toEqual({ text: `ab ${MARKER}`, count: 1 });
  });

  it('returns the same string when no pattern matches', () => {
    const text = 'nothing to see';
    expect(new CustomPatterns(['secret']).redact(text, { redactions: 0 })).toBe(text);
  });

  it('runs catastrophic-backtracking patterns in linear time', () => {
    // On a backtracking engine each of these takes exponential time on its text.
    const cases: Array<[string, string]> = [
      ['(a+)+$', `${'a'.repeat(100_000)}!`],
      ['(x+x+)+y', 'x'.repeat(100_000)],
      ['^(\\w+\\s?)+$', `${'word '.repeat(20_000)}!`],
    ];
    for (const [pattern, text] of cases) {
      const started = performance.now();
      const result = redact([pattern], text);
      expect(performance.now() - started).toBeLessThan(1000);
      expect(result).toEqual({ text, count: 0 });
    }
    expect(redact(['(a+)+$'], 'baaa')).toEqual({ text: `b${MARKER}`, count: 1 });
  });

  it.each([
    ['(abc', /is not valid RE2 syntax \(.*missing closing \)/],
    ['(?<=a)b', /is not valid RE2 syntax/],
    ['(a)\\1', /is not valid RE2 syntax/],
    ['a{1001}', /is not valid RE2 syntax \(.*invalid repeat count/],
    ['', /is empty/],
    ['x'.repeat(257), /is 257 characters long; at most 256 are allowed/],
    ['(abc|def){500}', /is too complex: it compiles to \d+ instructions; at most 2000 are allowed/],
    ['a*', /matches the empty string/],
    ['(secret)?', /matches the empty string/],
  ])('refuses %s', (pattern, problem) => {
    expect(compilePattern(pattern)).toMatch(problem);
  });
});
