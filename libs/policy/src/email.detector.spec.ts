import { EMAIL_DETECTOR } from './email.detector';

const MARKER = '[REDACTED:EMAIL]';

function redact(text: string): { text: string; count: number } {
  const tally = { redactions: 0 };
  return { text: EMAIL_DETECTOR.redact(text, tally), count: tally.redactions };
}

describe('EMAIL detector', () => {
  it.each([
    ['john.doe+tag@example.co.uk', 'contact ', ' today'],
    ['a_b%c-d@sub-domain.example.org', '', '.'],
    ['jane@corp.io', 'mailto:', ''],
    ['x.y@z.com', '{"email":"', '"}'],
    ['ops@host-1.internal', 'user=', ';'],
  ])('replaces %s wherever it stands', (address, before, after) => {
    expect(redact(`${before}${address}${after}`)).toEqual({ text: `${before}${MARKER}${after}`, count: 1 });
  });

  it('counts every address and keeps the text between them', () => {
    const addresses = ['a@example.com', 'b.c@example.org', 'd@example.net'];
    const result = redact(addresses.join(', '));
    expect(result).toEqual({ text: addresses.map(() => MARKER).join(', '), count: addresses.length });
  });

  it.each([
    ['a decorator', '@Component({ selector: "x" })'],
    ['a host without a dot', 'ssh root@localhost'],
    ['a scoped package with a version', 'npm i @scope/pkg@1.2.3'],
    ['a one-letter top-level domain', 'a@b.c'],
    ['a numeric top-level domain', 'user@10.0.0.1'],
    ['an at sign in prose', 'meet @ 5pm at the usual place'],
    ['a mention', 'thanks @jane.doe for the review'],
  ])('leaves %s alone', (_, text) => {
    expect(redact(text)).toEqual({ text, count: 0 });
  });

  it('returns the same string when there is no @', () => {
    const text = 'no address here';
    expect(EMAIL_DETECTOR.redact(text, { redactions: 0 })).toBe(text);
  });

  it('takes file names shaped like addresses (documented)', () => {
    expect(redact('icon@2x.png').text).toBe(MARKER);
  });

  it('reads at most 64 characters of local part, so a huge run costs linear time', () => {
    const text = `${'a'.repeat(200_000)}@example.com `.repeat(5);
    const started = performance.now();
    const result = redact(text);
    expect(performance.now() - started).toBeLessThan(1000);
    expect(result.count).toBe(5);
    expect(result.text).toBe(`${'a'.repeat(200_000 - 64)}${MARKER} `.repeat(5));
  });
});
