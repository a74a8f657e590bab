import { markerOf, replaceMatches, ScanPattern, type Tally, type TextDetector } from './redaction';

const MARKER = markerOf('PHONE');

/**
 * A phone number must show that it is one: a '+' country prefix, or the separators of a national
 * format. A bare run of digits never matches, whatever its length: timestamps, ids, amounts and
 * order numbers look exactly like unformatted phone numbers.
 *
 * Between digits, a separator is one space, dot or hyphen, or parentheses around an area code.
 * No alternative starts inside a word or a longer number: the character before is not a letter,
 * digit or '+', nor a '.' or '-' after one.
 */
const START = String.raw`(?<![0-9A-Za-z+]|[0-9A-Za-z][.-])`;
/** Nor does one end inside them: no letter or digit after, nor a '.' or '-' followed by a digit. */
const END = String.raw`(?![0-9A-Za-z]|[.-]\d)`;

const ALTERNATIVES = [
  // International (E.164): '+', a country code not starting with 0, 8–15 digits in all.
  // Each digit after the first may follow one separator; the separator group matches the empty
  // string in exactly one way, so no digit sequence can be split two ways.
  String.raw`\+[1-9](?:\)[ .-]?|[ .-]?\(?)\d(?:(?:\)[ .-]?|[ .-]?\(?)\d){6,13}`,
  // North American: (415) 555-2671, 415-555-2671, 415.555.2671, 1 415 555 2671; the area code
  // starts with 2–9, and the last four digits are always set apart.
  String.raw`(?:1[ .-]?)?(?:\([2-9]\d\d\) ?|[2-9]\d\d[ .-])\d\d\d[ .-]\d{4}`,
  // National with a trunk 0 (most of Europe, Asia, Africa, Latin America): 020 7946 0958,
  // 07700 900123, 030 12345678, 01 23 45 67 89, (030) 1234567; replacePhone checks the digit count.
  String.raw`(?:\(0\d{1,4}\) ?|0\d{1,4}[ .-])\d{2,8}(?:[ .-]\d{2,4}){0,4}`,
];

const PHONE = new ScanPattern(`${START}(?:${ALTERNATIVES.join('|')})${END}`);

/** Digits of a trunk-0 national number, 0 included: 9 (0 + the shortest subscriber numbers) to 12. */
const NATIONAL_DIGITS = { min: 9, max: 12 };

function digitCount(text: string): number {
  let count = 0;
  for (let i = 0; i < text.length; i++) {
    const code = text.charCodeAt(i);
    if (code >= 0x30 && code <= 0x39) count++;
  }
  return count;
}

function replacePhone(match: string, tally: Tally): string {
  const first = match.charCodeAt(0);
  // A trunk-0 number ("0…" or "(0…"): dates such as 01.05.2024 have the shape but too few digits.
  if (first === 0x30 || (first === 0x28 && match.charCodeAt(1) === 0x30)) {
    const digits = digitCount(match);
    if (digits < NATIONAL_DIGITS.min || digits > NATIONAL_DIGITS.max) return match;
  }
  tally.redactions++;
  return MARKER;
}

/**
 * PHONE: international numbers written with '+' (+14155552671, +44 20 7946 0958, +49 (30)
 * 1234567), North American numbers with separators ((415) 555-2671, 415.555.2671), and national
 * numbers with a trunk 0 and separators (020 7946 0958, 01 23 45 67 89). Not matched: digit runs
 * without a '+' or separators (4155552671, timestamps, ids), dates (2024-05-01, 01.05.2024), clock
 * times, IPv4 addresses and versions, numbers inside words or longer dotted runs.
 */
export const PHONE_DETECTOR: TextDetector = {
  name: 'PHONE',
  needsNumberRun: true,
  minLength: 9, // + and 8 digits
  redact(text: string, tally: Tally): string {
    return replaceMatches(text, PHONE, tally, replacePhone);
  },
};
