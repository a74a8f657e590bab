import { RE2JS } from 're2js';
import { POLICY_LIMITS } from './data-policy.model';
import { PATTERN_MARKER, type Tally } from './redaction';

/**
 * A project's own patterns run on RE2JS, a port of RE2: matching is linear in the text whatever
 * the pattern (no backtracking, so `(a+)+$` cannot stall a worker), and the syntax is RE2's: no
 * lookaround, no backreferences. Patterns are bounded in number, length and compiled program
 * size (POLICY_LIMITS), which bounds the work per character.
 */

/** The pattern compiled, or the reason it cannot be used (a sentence naming the problem). */
export function compilePattern(source: string): RE2JS | string {
  if (source.length === 0) return 'is empty';
  if (source.length > POLICY_LIMITS.maxPatternLength) {
    return `is ${source.length} characters long; at most ${POLICY_LIMITS.maxPatternLength} are allowed`;
  }
  let compiled: RE2JS;
  try {
    compiled = RE2JS.compile(source);
  } catch (error) {
    return `is not valid RE2 syntax (${error instanceof Error ? error.message : String(error)})`;
  }
  const size = compiled.programSize();
  if (size > POLICY_LIMITS.maxPatternProgramSize) {
    return `is too complex: it compiles to ${size} instructions; at most ${POLICY_LIMITS.maxPatternProgramSize} are allowed`;
  }
  // A pattern that matches nothing at all would put a marker between every two characters.
  if (compiled.test('')) return 'matches the empty string; a pattern must match at least one character';
  return compiled;
}

/** Each pattern's matches replaced by `[REDACTED:PATTERN]`, the patterns in the order given. */
export class CustomPatterns {
  private readonly compiled: RE2JS[];

  constructor(sources: readonly string[]) {
    this.compiled = sources.map((source) => {
      const compiled = compilePattern(source);
      if (typeof compiled === 'string') throw new Error(`pattern ${JSON.stringify(source)} ${compiled}`);
      return compiled;
    });
  }

  get size(): number {
    return this.compiled.length;
  }

  redact(text: string, tally: Tally): string {
    let result = text;
    for (const pattern of this.compiled) {
      // test() runs RE2's DFA without tracking positions, several times faster than a replacement
      // pass; most texts match no pattern, so they never pay for the replacement.
      if (!pattern.test(result)) continue;
      result = pattern.matcher(result).replaceAll((match: string) => {
        // A pattern that can match empty (`x*`) does so between characters: nothing to replace.
        if (match === '') return '';
        tally.redactions++;
        return PATTERN_MARKER;
      });
    }
    return result;
  }
}
