import type { Detector } from './data-policy.model';

/** Counts the replacements made while a policy is applied; passed down instead of allocating results. */
export interface Tally {
  redactions: number;
}

/**
 * One way of finding sensitive values in text. `redact` returns the text itself (the same string)
 * when it finds nothing, and adds one to the tally per replacement.
 *
 * Every built-in detector runs in time linear in the text: either a scan from a trigger
 * (indexOf of '@', 'J', ':', '.', '-', '_') that reads a bounded distance around it and moves past what
 * it read, or a JS RegExp whose repetitions are all bounded and whose repeated groups begin with a
 * character the item before cannot match, so an attempt at one position backtracks at most a
 * constant amount. None has a nested unbounded quantifier.
 */
export interface TextDetector {
  readonly name: Detector;
  /**
   * True when the detector finds nothing in a text without a digit run (NUMBER_RUN: eight digits,
   * at most two of ` .()+-` between each two); the caller checks once for all such detectors.
   */
  readonly needsNumberRun: boolean;
  /** The shortest text it can find something in (shorter texts are skipped). */
  readonly minLength: number;
  redact(text: string, tally: Tally): string;
}

/**
 * Eight digits, at most two separators between each two: what every phone number (8 digits and
 * more) and card number (13 and more) has, with the separators they may use. One probe for both
 * spares their scans of the many texts whose numbers are short (years, counts, prices).
 */
export const NUMBER_RUN = /\d(?:[ .()+-]{0,2}\d){7}/;

export const PATTERN_MARKER = '[REDACTED:PATTERN]';

export function markerOf(detector: Detector): string {
  return `[REDACTED:${detector}]`;
}

/**
 * A detector's JS RegExp, twice: `probe` answers whether the text has a match at all, which costs
 * V8 a fraction of a replacement pass with a callback (measured: 2.5x less), and most texts have
 * none; `global` makes the replacements.
 */
export class ScanPattern {
  readonly probe: RegExp;
  readonly global: RegExp;

  constructor(source: string) {
    this.probe = new RegExp(source);
    this.global = new RegExp(source, 'g');
  }
}

/**
 * Replaces the pattern's matches; `replace` gives each match's replacement (the match itself to
 * keep it) and counts what it replaced in the tally. The same string comes back when nothing
 * was counted.
 */
export function replaceMatches(text: string, pattern: ScanPattern, tally: Tally, replace: (match: string, tally: Tally) => string): string {
  if (!pattern.probe.test(text)) return text;
  const before = tally.redactions;
  const result = text.replace(pattern.global, (match: string) => replace(match, tally));
  return tally.redactions === before ? text : result;
}
