import { markerOf, type Tally, type TextDetector } from './redaction';

const MARKER = markerOf('EMAIL');
/** RFC 5321 limits: 64 octets of local part, 253 of domain (255 minus the length octets). */
const MAX_LOCAL = 64;
const MAX_DOMAIN = 253;

/** The local-part characters ordinary addresses use: letters, digits, `. _ % + -`. */
function isLocalChar(code: number): boolean {
  return isAlphaNumeric(code) || code === 0x2e || code === 0x5f || code === 0x25 || code === 0x2b || code === 0x2d;
}

function isAlphaNumeric(code: number): boolean {
  return (code >= 0x30 && code <= 0x39) || (code >= 0x41 && code <= 0x5a) || (code >= 0x61 && code <= 0x7a);
}

function isLetter(code: number): boolean {
  return (code >= 0x41 && code <= 0x5a) || (code >= 0x61 && code <= 0x7a);
}

/** Where the local part before the '@' at `at` starts (not before `floor`); `at` when there is none. */
function localStart(text: string, at: number, floor: number): number {
  let start = at;
  while (start > floor && at - start < MAX_LOCAL && isLocalChar(text.charCodeAt(start - 1))) start--;
  while (start < at && text.charCodeAt(start) === 0x2e) start++; // a local part does not start with '.'
  return start;
}

/**
 * Where the domain after the '@' at `at` ends, or -1 when there is no domain: dot-separated labels
 * of letters, digits and inner hyphens, at least two of them, the last (the top-level domain)
 * two or more letters. A trailing label that is not a TLD is left out ("a@b.com.5" → "a@b.com").
 */
function domainEnd(text: string, at: number): number {
  let end = at + 1;
  while (end < text.length && end - at - 1 < MAX_DOMAIN) {
    const code = text.charCodeAt(end);
    if (!isAlphaNumeric(code) && code !== 0x2e && code !== 0x2d) break;
    end++;
  }
  const labels = text.slice(at + 1, end).split('.');
  while (labels.length > 0 && labels[labels.length - 1] === '') labels.pop(); // a sentence's full stop
  while (labels.length >= 2 && !isTopLevel(labels[labels.length - 1])) labels.pop();
  if (labels.length < 2 || !labels.every(isLabel)) return -1;
  return at + 1 + labels.join('.').length;
}

function isLabel(label: string): boolean {
  return label.length > 0 && label.length <= 63 && label.charCodeAt(0) !== 0x2d && label.charCodeAt(label.length - 1) !== 0x2d;
}

function isTopLevel(label: string): boolean {
  if (label.length < 2) return false;
  for (let i = 0; i < label.length; i++) if (!isLetter(label.charCodeAt(i))) return false;
  return true;
}

/**
 * EMAIL: `local@domain.tld` with the characters ordinary addresses use. Found from each '@', so a
 * text without one costs a single indexOf. Not matched: quoted or IP-literal local parts and
 * internationalised (non-ASCII) addresses; `user@localhost` (no dot). Matched although not an
 * address: file names like `icon@2x.png`.
 */
export const EMAIL_DETECTOR: TextDetector = {
  name: 'EMAIL',
  needsNumberRun: false,
  minLength: 6, // a@b.co
  redact(text: string, tally: Tally): string {
    let at = text.indexOf('@');
    if (at < 0) return text;
    let out = '';
    let copied = 0;
    while (at >= 0) {
      const start = localStart(text, at, copied);
      const end = start < at ? domainEnd(text, at) : -1;
      if (end > 0) {
        out += text.slice(copied, start) + MARKER;
        copied = end;
        tally.redactions++;
      }
      at = text.indexOf('@', Math.max(at + 1, end));
    }
    return copied === 0 ? text : out + text.slice(copied);
  },
};
