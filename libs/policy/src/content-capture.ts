import { createHash } from 'node:crypto';
import type { CaptureMode } from './data-policy.model';
import type { Tally } from './redaction';
import type { TextRedactor } from './text-redactor';

/** What applying a policy to one span or event did. */
export interface Outcome extends Tally {
  /** Some content was cut to maxContentBytes. */
  truncated: boolean;
}

/** `sha256:<64 hex digits>` of the text's UTF-8 bytes: equal contents stay comparable, none is readable. */
export function sha256Of(text: string): string {
  return `sha256:${createHash('sha256').update(text, 'utf8').digest('hex')}`;
}

/** The marker that ends cut content; it names the full size, so a reader knows how much is missing. */
export function truncationMarker(totalBytes: number): string {
  return `[TRUNCATED:${totalBytes} bytes]`;
}

/** UTF-16 units of the longest prefix of `text` that takes at most `budget` bytes in UTF-8, never splitting a character. */
function utf8PrefixLength(text: string, budget: number): number {
  let bytes = 0;
  let i = 0;
  while (i < text.length) {
    const code = text.charCodeAt(i);
    let units = 1;
    let size = 3; // the rest of the BMP, and a lone surrogate (written as U+FFFD)
    if (code < 0x80) size = 1;
    else if (code < 0x800) size = 2;
    else if (code >= 0xd800 && code <= 0xdbff && i + 1 < text.length) {
      const next = text.charCodeAt(i + 1);
      if (next >= 0xdc00 && next <= 0xdfff) {
        size = 4;
        units = 2;
      }
    }
    if (bytes + size > budget) break;
    bytes += size;
    i += units;
  }
  return i;
}

/**
 * The text cut so that it and the marker after it take at most `maxBytes` bytes of UTF-8, the cut
 * falling between characters (never inside a multibyte character or a surrogate pair). A text
 * that fits comes back unchanged.
 */
export function truncateUtf8(text: string, maxBytes: number): string {
  // A UTF-16 unit is at most 3 bytes of UTF-8 (a surrogate pair, two units, is 4).
  if (text.length * 3 <= maxBytes) return text;
  const total = Buffer.byteLength(text, 'utf8');
  if (total <= maxBytes) return text;
  const marker = truncationMarker(total);
  const budget = Math.max(0, maxBytes - marker.length);
  // As many bytes as units: every character is ASCII, and the cut needs no walk.
  return text.slice(0, total === text.length ? budget : utf8PrefixLength(text, budget)) + marker;
}

/**
 * One side's capture mode applied to a content value: FULL keeps it redacted and capped, HASH
 * keeps the hash of the content as it arrived, DROP keeps nothing (undefined).
 */
export class ContentRule {
  constructor(
    readonly mode: CaptureMode,
    private readonly maxBytes: number | null,
    private readonly redactor: TextRedactor,
  ) {}

  /** True when the rule keeps every content value as plain redaction would. */
  get isPlain(): boolean {
    return this.mode === 'FULL' && this.maxBytes === null;
  }

  apply(text: string, outcome: Outcome): string | undefined {
    if (this.mode === 'DROP') return undefined;
    if (text === '') return text;
    if (this.mode === 'HASH') return sha256Of(text);
    const redacted = this.redactor.redact(text, outcome);
    if (this.maxBytes === null) return redacted;
    const kept = truncateUtf8(redacted, this.maxBytes);
    if (kept !== redacted) outcome.truncated = true;
    return kept;
  }
}
