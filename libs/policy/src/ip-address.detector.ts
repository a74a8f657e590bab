import { markerOf, type Tally, type TextDetector } from './redaction';

const MARKER = markerOf('IP_ADDRESS');

/**
 * Four dot-separated groups of 1–3 digits, not part of a longer dotted run (a version such as
 * 1.2.3.4.5, a word, a decimal): the character before is not a letter or digit, nor a '.' after
 * one; the one after is not a letter or digit, nor a '.' before one. Sticky: tried only where a
 * '.' has digits on both sides. isIpv4 then checks the octets.
 */
const IPV4_AT = /(?<![0-9A-Za-z]|[0-9A-Za-z]\.)\d{1,3}\.\d{1,3}\.\d{1,3}\.\d{1,3}(?![0-9A-Za-z]|\.[0-9A-Za-z])/y;

/**
 * What every address contains: three dotted digit groups (IPv4), a '::' or a colon between two hex
 * digits (IPv6). One regex pass answers for both scans below, which cost more on texts full of
 * full stops and JSON colons.
 */
const ADDRESS_PROBE = /\d\.\d{1,3}\.\d|::|[0-9A-Fa-f]:[0-9A-Fa-f]/;

/** Dotted-quad IPv4: four octets 0–255 without leading zeros (so 01.02.2024.1 is no address). */
export function isIpv4(text: string): boolean {
  const parts = text.split('.');
  if (parts.length !== 4) return false;
  for (const part of parts) {
    if (part.length === 0 || part.length > 3 || (part.length > 1 && part.charCodeAt(0) === 0x30)) return false;
    for (let i = 0; i < part.length; i++) {
      const code = part.charCodeAt(i);
      if (code < 0x30 || code > 0x39) return false;
    }
    if (Number(part) > 255) return false;
  }
  return true;
}

function isHexGroup(group: string): boolean {
  if (group.length === 0 || group.length > 4) return false;
  for (let i = 0; i < group.length; i++) if (!isHex(group.charCodeAt(i))) return false;
  return true;
}

/**
 * IPv6 in any RFC 4291 text form: eight groups of 1–4 hex digits, or fewer with one '::', the
 * last two groups possibly written as IPv4 (::ffff:192.0.2.1). A bare '::' is not taken (it is C++
 * and Rust path syntax far more often than the unspecified address).
 */
export function isIpv6(text: string): boolean {
  let groupsText = text;
  let ipv4Groups = 0;
  const lastColon = text.lastIndexOf(':');
  if (text.indexOf('.', lastColon) >= 0) {
    if (!isIpv4(text.slice(lastColon + 1))) return false;
    const head = text.slice(0, lastColon + 1);
    groupsText = head.endsWith('::') ? head : head.slice(0, -1);
    ipv4Groups = 2;
  }
  const gap = groupsText.indexOf('::');
  if (gap < 0) {
    const groups = groupsText.split(':');
    return groups.length + ipv4Groups === 8 && groups.every(isHexGroup);
  }
  if (groupsText.indexOf('::', gap + 1) >= 0) return false;
  const head = groupsText.slice(0, gap);
  const tail = groupsText.slice(gap + 2);
  const groups = [...(head === '' ? [] : head.split(':')), ...(tail === '' ? [] : tail.split(':'))];
  const count = groups.length + ipv4Groups;
  return count >= 1 && count <= 7 && groups.every(isHexGroup);
}

function isHex(code: number): boolean {
  return (code >= 0x30 && code <= 0x39) || (code >= 0x41 && code <= 0x46) || (code >= 0x61 && code <= 0x66);
}

function isHexOrColon(code: number): boolean {
  return isHex(code) || code === 0x3a;
}

/** A character that glues to an address and makes it part of something else (a word, a path, a number). */
function isWordChar(code: number): boolean {
  return (code >= 0x30 && code <= 0x39) || (code >= 0x41 && code <= 0x5a) || (code >= 0x61 && code <= 0x7a) || code === 0x5f;
}

/** The longest written IPv6 form: 8 groups of 4 hex digits and 7 colons, or 6 groups + IPv4. */
const MAX_IPV6 = 45;

/**
 * Where the IPv6 address read as text[start, end) ends, or -1 when it is none. A sentence's full
 * stop or colon after the address is not part of it ("fe80::1." and "at fe80::1: it failed").
 */
function ipv6End(text: string, start: number, end: number): number {
  let candidateEnd = end;
  const last = text.charCodeAt(end - 1);
  if (last === 0x2e || (last === 0x3a && text.charCodeAt(end - 2) !== 0x3a)) candidateEnd--;
  if (candidateEnd - start < 3 || candidateEnd - start > MAX_IPV6) return -1;
  return isIpv6(text.slice(start, candidateEnd)) ? candidateEnd : -1;
}

/**
 * Found from each ':': the run of hex digits, colons and dots around it is read once (the search
 * goes on after it), and its edges must not touch a word character or a dot.
 */
function redactIpv6(text: string, tally: Tally): string {
  let at = text.indexOf(':');
  let out = '';
  let copied = 0;
  while (at >= 0) {
    // A ':' in prose or JSON has no hex digit or ':' beside it.
    if (!isHexOrColon(text.charCodeAt(at - 1)) && !isHexOrColon(text.charCodeAt(at + 1))) {
      at = text.indexOf(':', at + 1);
      continue;
    }
    let start = at;
    while (start > copied && isHexOrColon(text.charCodeAt(start - 1))) start--;
    let end = at + 1;
    while (end < text.length) {
      const code = text.charCodeAt(end);
      if (!isHex(code) && code !== 0x3a && code !== 0x2e) break;
      end++;
    }
    const before = start > 0 ? text.charCodeAt(start - 1) : -1;
    const after = end < text.length ? text.charCodeAt(end) : -1;
    const candidateEnd = !isWordChar(before) && before !== 0x2e && !isWordChar(after) ? ipv6End(text, start, end) : -1;
    if (candidateEnd > 0) {
      out += text.slice(copied, start) + MARKER;
      copied = candidateEnd;
      tally.redactions++;
    }
    at = text.indexOf(':', end);
  }
  return copied === 0 ? text : out + text.slice(copied);
}

function isDigit(code: number): boolean {
  return code >= 0x30 && code <= 0x39;
}

/**
 * Found from each '.' with a digit on both sides (a single-character search; prose has few such
 * dots): the address is tried from the up to three digits before it.
 */
function redactIpv4(text: string, tally: Tally): string {
  let dot = text.indexOf('.');
  let out = '';
  let copied = 0;
  while (dot >= 0) {
    if (isDigit(text.charCodeAt(dot - 1)) && isDigit(text.charCodeAt(dot + 1))) {
      let start = dot - 1;
      while (start > copied && dot - start < 3 && isDigit(text.charCodeAt(start - 1))) start--;
      IPV4_AT.lastIndex = start;
      const match = start >= copied ? IPV4_AT.exec(text) : null;
      if (match !== null && isIpv4(match[0])) {
        out += text.slice(copied, start) + MARKER;
        copied = start + match[0].length;
        tally.redactions++;
        dot = text.indexOf('.', copied);
        continue;
      }
    }
    dot = text.indexOf('.', dot + 1);
  }
  return copied === 0 ? text : out + text.slice(copied);
}

/**
 * IP_ADDRESS: IPv4 dotted quads (octets 0–255, no leading zeros) and IPv6 addresses, with or
 * without '::' compression or an IPv4 tail. Not matched: version strings of five or more parts
 * (1.2.3.4.5), dotted runs inside words (v1.2.3.4), clock times (10:30:00), MAC addresses (six
 * groups), a bare '::'. A four-part version such as 1.2.3.4 cannot be told from an address and
 * is redacted.
 */
export const IP_ADDRESS_DETECTOR: TextDetector = {
  name: 'IP_ADDRESS',
  needsNumberRun: false,
  minLength: 3, // ::1
  redact(text: string, tally: Tally): string {
    if (!ADDRESS_PROBE.test(text)) return text;
    // IPv6 first: its IPv4 tail would otherwise be redacted alone, leaving the '::ffff:' head.
    const v6 = text.indexOf(':') >= 0 ? redactIpv6(text, tally) : text;
    return redactIpv4(v6, tally);
  },
};
