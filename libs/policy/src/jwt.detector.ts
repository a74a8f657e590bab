import { markerOf, type Tally, type TextDetector } from './redaction';

const MARKER = markerOf('JWT');
/** `{"alg":"x"}`, the shortest header there is, is 15 base64url characters. */
const MIN_HEADER = 15;
/** JWS compact serialisation has three segments, JWE five. */
const MAX_SEGMENTS = 5;

function isBase64Url(code: number): boolean {
  return (
    (code >= 0x30 && code <= 0x39) ||
    (code >= 0x41 && code <= 0x5a) ||
    (code >= 0x61 && code <= 0x7a) ||
    code === 0x2d || // -
    code === 0x5f // _
  );
}

function segmentEnd(text: string, from: number): number {
  let end = from;
  while (end < text.length && isBase64Url(text.charCodeAt(end))) end++;
  return end;
}

/**
 * The end of the token starting at `start` (on "eyJ", a base64url '{"'), or -1: a header of
 * MIN_HEADER or more characters, a non-empty payload, and a signature that may be empty (an
 * unsigned token ends in '.'); a JWE's two further segments are taken too.
 */
function tokenEnd(text: string, start: number): number {
  if (start > 0 && isBase64Url(text.charCodeAt(start - 1))) return -1;
  const header = segmentEnd(text, start);
  if (header - start < MIN_HEADER || text.charCodeAt(header) !== 0x2e) return -1;
  const payload = segmentEnd(text, header + 1);
  if (payload === header + 1 || text.charCodeAt(payload) !== 0x2e) return -1;
  let end = segmentEnd(text, payload + 1);
  for (let segments = 3; segments < MAX_SEGMENTS && text.charCodeAt(end) === 0x2e && isBase64Url(text.charCodeAt(end + 1)); segments++) {
    end = segmentEnd(text, end + 1);
  }
  return end;
}

/**
 * JWT: three (JWE: five) dot-separated base64url segments whose header starts with `eyJ` (the
 * encoding of `{"`), as in `Authorization: Bearer eyJ…`. Found from each 'J' preceded by "ey" (a
 * single-character search: 'e' is too common a first character to search "eyJ" fast). Not
 * matched: a header shorter than any real one, or two segments only.
 */
export const JWT_DETECTOR: TextDetector = {
  name: 'JWT',
  needsNumberRun: false,
  minLength: MIN_HEADER + 3,
  redact(text: string, tally: Tally): string {
    let j = text.indexOf('J', 2);
    if (j < 0) return text;
    let out = '';
    let copied = 0;
    while (j >= 0) {
      const start = j - 2;
      const end = start >= copied && text.charCodeAt(start) === 0x65 && text.charCodeAt(start + 1) === 0x79 ? tokenEnd(text, start) : -1;
      if (end > 0) {
        out += text.slice(copied, start) + MARKER;
        copied = end;
        tally.redactions++;
      }
      j = text.indexOf('J', end > 0 ? end + 2 : j + 1);
    }
    return copied === 0 ? text : out + text.slice(copied);
  },
};
