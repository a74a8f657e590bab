import { createHash } from 'node:crypto';
import { ContentRule, sha256Of, truncateUtf8, truncationMarker, type Outcome } from './content-capture';
import { TextRedactor } from './text-redactor';

const bytesOf = (text: string) => Buffer.byteLength(text, 'utf8');
const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;

describe('truncateUtf8', () => {
  it('leaves a text that fits as it is', () => {
    const text = 'é'.repeat(128); // 256 bytes
    expect(truncateUtf8(text, 256)).toBe(text);
  });

  it.each([
    ['ASCII', 'a', 1],
    ['two-byte characters', 'é', 2],
    ['three-byte characters', '€', 3],
    ['surrogate pairs', '😀', 4],
  ])('cuts %s between characters and fits the marker in the cap', (_, char, size) => {
    for (const cap of [256, 257, 258, 259, 1000]) {
      const text = char.repeat(2000);
      const total = bytesOf(text);
      const marker = truncationMarker(total);
      const cut = truncateUtf8(text, cap);
      expect(cut.endsWith(marker)).toBe(true);
      const kept = cut.slice(0, -marker.length);
      expect(bytesOf(cut)).toBeLessThanOrEqual(cap);
      // The longest whole-character prefix: one more character would not fit.
      expect(bytesOf(kept) + size).toBeGreaterThan(cap - marker.length);
      expect(text.startsWith(kept)).toBe(true);
      expect(LONE_SURROGATE.test(cut)).toBe(false);
      expect(Buffer.from(cut, 'utf8').toString('utf8')).toBe(cut);
    }
  });

  it('cuts mixed text at a character boundary', () => {
    const text = `${'a'.repeat(230)}😀€é${'x'.repeat(500)}`;
    const marker = truncationMarker(bytesOf(text));
    const cut = truncateUtf8(text, 256);
    const budget = 256 - marker.length;
    let expectedKept = '';
    for (const char of text) {
      if (bytesOf(expectedKept + char) > budget) break;
      expectedKept += char;
    }
    expect(cut).toBe(expectedKept + marker);
  });
});

describe('ContentRule', () => {
  const redactor = new TextRedactor(['EMAIL'], []);
  const outcome = (): Outcome => ({ redactions: 0, truncated: false });
  const content = 'write to jane@example.com about the invoice';

  it('FULL keeps the content, redacted', () => {
    const result = outcome();
    expect(new ContentRule('FULL', null, redactor).apply(content, result)).toBe('write to [REDACTED:EMAIL] about the invoice');
    expect(result).toEqual({ redactions: 1, truncated: false });
  });

  it('HASH keeps the SHA-256 of the content as it arrived, redacting nothing', () => {
    const result = outcome();
    const expected = `sha256:${createHash('sha256').update(Buffer.from(content, 'utf8')).digest('hex')}`;
    expect(new ContentRule('HASH', 256, redactor).apply(content, result)).toBe(expected);
    expect(sha256Of(content)).toBe(expected);
    expect(result).toEqual({ redactions: 0, truncated: false });
  });

  it('DROP keeps nothing', () => {
    expect(new ContentRule('DROP', null, redactor).apply(content, outcome())).toBeUndefined();
  });

  it('keeps empty content empty, even when hashing', () => {
    expect(new ContentRule('HASH', null, redactor).apply('', outcome())).toBe('');
  });

  it('redacts before it cuts, so a value across the cut is never left half there', () => {
    const text = `${'a'.repeat(200)} jane.doe@example.com ${'b'.repeat(400)}`;
    const result = outcome();
    const kept = new ContentRule('FULL', 256, redactor).apply(text, result)!;
    const redacted = text.replace('jane.doe@example.com', '[REDACTED:EMAIL]');
    expect(kept).toBe(truncateUtf8(redacted, 256));
    expect(kept).not.toContain('jane');
    expect(result).toEqual({ redactions: 1, truncated: true });
  });
});
