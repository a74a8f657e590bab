import { isArray, keys, min, parseJsonText, toJsonText } from './intrinsics';

/**
 * Canonical text of a tool call's arguments, and a cheap similarity between two of them, for loop
 * detection: the same call issued again differs at most in key order, whitespace, case or a word.
 */

/**
 * Longer arguments are compared by their first 4 KiB, whitespace-collapsed and not parsed: it bounds
 * the work per call (a loop of pasted documents would otherwise cost a parse each), and keeps the
 * recursive canonical form far from the call-stack limit (4 KiB nests at most ~2,000 deep).
 */
const MAX_ARGUMENT_CHARS = 4096;

/**
 * A letter or digit beyond ASCII (ASCII is tested by code: the Unicode regex costs ~3× more per
 * call). Tested per UTF-16 unit, so letters outside the BMP (rare in arguments) separate words.
 */
const NON_ASCII_WORD_CHAR = /[\p{L}\p{N}]/u;

export interface ToolArguments {
  /** JSON with keys sorted at every level and whitespace in strings collapsed, else the collapsed text. */
  canonical: string;
  /** Lowercased words of the argument values, keys left out (they repeat in every call of a tool). */
  words: string[];
}

export function normaliseToolArguments(text: string): string {
  return readToolArguments(text).canonical;
}

export function readToolArguments(text: string): ToolArguments {
  const trimmed = text.trim();
  if (trimmed.length <= MAX_ARGUMENT_CHARS) {
    const parsed = parseJson(trimmed);
    if (parsed.ok) {
      const words: string[] = [];
      return { canonical: canonicalJson(parsed.value, words), words };
    }
  }
  const canonical = collapseWhitespace(trimmed.slice(0, MAX_ARGUMENT_CHARS));
  return { canonical, words: wordsOf(canonical, []) };
}

/** Not an error to report: a tool may take free text, which is then compared as text. */
function parseJson(text: string): { ok: true; value: unknown } | { ok: false } {
  try {
    return { ok: true, value: parseJsonText(text) };
  } catch {
    return { ok: false };
  }
}

function collapseWhitespace(text: string): string {
  return text.replace(/\s+/g, ' ').trim();
}

/** Runs of letters and digits, lowercased: "A-10023" is two words, "order_id" two, "Paris" one. */
function wordsOf(text: string, into: string[]): string[] {
  let wordStart = -1;
  for (let at = 0; at <= text.length; at++) {
    if (at < text.length && isWordChar(text, at)) {
      if (wordStart < 0) wordStart = at;
    } else if (wordStart >= 0) {
      into.push(text.slice(wordStart, at).toLowerCase());
      wordStart = -1;
    }
  }
  return into;
}

function isWordChar(text: string, at: number): boolean {
  const code = text.charCodeAt(at);
  if (code < 128) return (code >= 48 && code <= 57) || (code >= 65 && code <= 90) || (code >= 97 && code <= 122);
  return NON_ASCII_WORD_CHAR.test(text[at]);
}

/** Canonical JSON of `value`, collecting the words of its string, number and boolean values. */
function canonicalJson(value: unknown, words: string[]): string {
  if (typeof value === 'string') {
    const text = collapseWhitespace(value);
    wordsOf(text, words);
    return toJsonText(text);
  }
  if (isArray(value)) return `[${value.map((item) => canonicalJson(item, words)).join(',')}]`;
  if (value !== null && typeof value === 'object') {
    const record = value as Record<string, unknown>;
    const entries = keys(record)
      .sort()
      .map((key) => `${toJsonText(key)}:${canonicalJson(record[key], words)}`);
    return `{${entries.join(',')}}`;
  }
  const text = toJsonText(value);
  wordsOf(text, words);
  return text;
}

/**
 * Words as a sorted multiset of codes from `dictionary` (shared by the calls being compared), so
 * that `wordDice` is one merge of two integer arrays.
 */
export function wordProfile(words: readonly string[], dictionary: Map<string, number>): number[] {
  const codes = words.map((word) => {
    let code = dictionary.get(word);
    if (code === undefined) dictionary.set(word, (code = dictionary.size));
    return code;
  });
  return codes.sort((a, b) => a - b);
}

/**
 * Sørensen–Dice coefficient of two word multisets: 2·|A∩B| / (|A|+|B|). At the 0.9 threshold one
 * word in ten may differ: a long query reworded by a word still matches, while a short call whose id,
 * date or city changed (`{"order_id":"A-10023"}` → `"A-10024"`: 0.5) is a different call, not a
 * repeat — which a character measure gets wrong (0.90 on that pair). Two empty multisets score 0:
 * calls without words only match when their canonical text is equal.
 */
export function wordDice(a: readonly number[], b: readonly number[]): number {
  const total = a.length + b.length;
  if (total === 0) return 0;
  let common = 0;
  let i = 0;
  let j = 0;
  while (i < a.length && j < b.length) {
    if (a[i] === b[j]) {
      common++;
      i++;
      j++;
    } else if (a[i] < b[j]) {
      i++;
    } else {
      j++;
    }
  }
  return (2 * common) / total;
}

/** Upper bound of `wordDice` from the sizes alone: cheaper than the merge, and usually decisive. */
export function maxWordDice(a: readonly number[], b: readonly number[]): number {
  const total = a.length + b.length;
  return total === 0 ? 0 : (2 * min(a.length, b.length)) / total;
}
