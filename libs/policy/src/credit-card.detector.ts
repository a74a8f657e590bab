import { markerOf, replaceMatches, ScanPattern, type Tally, type TextDetector } from './redaction';

const MARKER = markerOf('CREDIT_CARD');
const MIN_DIGITS = 13;
const MAX_DIGITS = 19;

/**
 * A run of 13 to 19 digits, single spaces or hyphens allowed between them, that does not continue
 * a word, a hyphenated token (a UUID's groups) or a decimal number: the character before is not a
 * letter, digit or '+' (a phone number's country code), nor a '-' or '.' after one; the character
 * after is not a letter or digit, nor a '-' or '.' before one. Greedy, so the longest run wins;
 * replaceRun looks inside it when the whole is not a card number.
 */
const CARD_RUN = new ScanPattern(String.raw`(?<![0-9A-Za-z+]|[0-9A-Za-z][-.])\d(?:[ -]?\d){12,18}(?![0-9A-Za-z]|[-.][0-9A-Za-z])`);

/** The Luhn checksum (ISO/IEC 7812): every card number passes it, 9 in 10 random digit strings do not. */
export function luhnValid(digits: string): boolean {
  let sum = 0;
  let double = false;
  for (let i = digits.length - 1; i >= 0; i--) {
    let digit = digits.charCodeAt(i) - 0x30;
    if (double) {
      digit *= 2;
      if (digit > 9) digit -= 9;
    }
    sum += digit;
    double = !double;
  }
  return sum % 10 === 0;
}

/**
 * Whether the digits have the prefix and length of a payment card network: Visa (4; 13, 16 or 19
 * digits), Mastercard (51–55, 2221–2720; 16), American Express (34, 37; 15), Diners Club (300–305,
 * 36, 38, 39; 14–19), JCB (35; 16–19), Discover, UnionPay and Maestro (6; 13–19; Maestro also 50,
 * 56–59). Numbers starting with 0, 1, 7, 8 or 9 are never cards here: that keeps epoch timestamps
 * in ms, µs and ns (1…) and most database ids out even when they pass the Luhn check.
 */
export function hasCardShape(digits: string): boolean {
  const length = digits.length;
  if (length < MIN_DIGITS || length > MAX_DIGITS) return false;
  const two = Number(digits.slice(0, 2));
  const four = Number(digits.slice(0, 4));
  switch (digits.charCodeAt(0) - 0x30) {
    case 2:
      return four >= 2221 && four <= 2720 && length === 16;
    case 3:
      if (two === 34 || two === 37) return length === 15;
      if (two === 35) return length >= 16;
      return (two === 36 || two === 38 || two === 39 || (two === 30 && four <= 3059)) && length >= 14;
    case 4:
      return length === 13 || length === 16 || length === 19;
    case 5:
      return two >= 51 && two <= 55 ? length === 16 : two === 50 || two >= 56;
    case 6:
      return true;
    default:
      return false;
  }
}

export function isCardNumber(digits: string): boolean {
  return hasCardShape(digits) && luhnValid(digits);
}

/** The digit groups of a run ("4111 1111-1111" → 4111, 1111, 1111) with their offsets in it. */
function groupsOf(run: string): Array<{ start: number; end: number; digits: string }> {
  const groups: Array<{ start: number; end: number; digits: string }> = [];
  let start = 0;
  for (let i = 0; i <= run.length; i++) {
    const code = run.charCodeAt(i);
    if (i === run.length || code === 0x20 || code === 0x2d) {
      groups.push({ start, end: i, digits: run.slice(start, i) });
      start = i + 1;
    }
  }
  return groups;
}

/**
 * A run that is not a card number as a whole may hold one between its separators: a card with a
 * count before or after it ("2 4111 1111 1111 1111", "4111 1111 1111 1111 12"). Consecutive groups
 * are tried, longest first from the left; each found card is replaced and the search goes on after
 * it. At most 19 groups, so at most 190 candidates.
 */
function replaceRun(run: string, tally: Tally): string {
  const digits = run.replace(/[ -]/g, '');
  if (isCardNumber(digits)) {
    tally.redactions++;
    return MARKER;
  }
  if (digits.length === run.length) return run;
  const groups = groupsOf(run);
  let out = '';
  let copied = 0;
  for (let first = 0; first < groups.length; first++) {
    for (let last = groups.length - 1; last >= first; last--) {
      let candidate = '';
      for (let g = first; g <= last; g++) candidate += groups[g].digits;
      if (!isCardNumber(candidate)) continue;
      out += run.slice(copied, groups[first].start) + MARKER;
      copied = groups[last].end;
      tally.redactions++;
      first = last;
      break;
    }
  }
  return copied === 0 ? run : out + run.slice(copied);
}

/**
 * CREDIT_CARD: 13–19 digits, optionally grouped by spaces or hyphens, with a card network's prefix
 * and length, and a valid Luhn checksum. Not matched: digit runs inside words, UUIDs or decimals,
 * numbers that fail the checksum, numbers with other separators (dots, commas).
 */
export const CREDIT_CARD_DETECTOR: TextDetector = {
  name: 'CREDIT_CARD',
  needsNumberRun: true,
  minLength: 13,
  redact(text: string, tally: Tally): string {
    return replaceMatches(text, CARD_RUN, tally, replaceRun);
  },
};
