import { CustomPatterns } from './custom-pattern';
import type { Detector } from './data-policy.model';
import { detectorsFor } from './detectors';
import { NUMBER_RUN, type Tally, type TextDetector } from './redaction';

/**
 * With custom patterns, texts this short that held nothing are remembered, so the values every
 * span repeats (service and host names, models, operation names, SDK versions) go through RE2
 * once: each RE2 call costs ~0.3 µs even on a short text. The built-in detectors are cheaper than
 * the memo's hashing, so without patterns there is no memo. At most MEMO_ENTRIES texts, about
 * 128 KB; when full the memo starts again.
 */
const MEMO_MAX_LENGTH = 64;
const MEMO_ENTRIES = 1024;

/** A policy's detectors, then its own patterns, applied to one text at a time. */
export class TextRedactor {
  private readonly detectors: TextDetector[];
  private readonly patterns: CustomPatterns;
  private readonly needsNumberRun: boolean;
  private readonly clean = new Set<string>();

  constructor(detectors: readonly Detector[], patterns: readonly string[]) {
    this.detectors = detectorsFor(detectors);
    this.patterns = new CustomPatterns(patterns);
    this.needsNumberRun = this.detectors.some((detector) => detector.needsNumberRun);
  }

  /** False when there is nothing to find: redact then returns every text as it is. */
  get active(): boolean {
    return this.detectors.length > 0 || this.patterns.size > 0;
  }

  /** The text with every detected value and pattern match replaced; the same string when nothing was. */
  redact(text: string, tally: Tally): string {
    if (text.length === 0) return text;
    const memo = this.patterns.size > 0 && text.length <= MEMO_MAX_LENGTH;
    if (memo && this.clean.has(text)) return text;
    let result = text;
    const numberRun = this.needsNumberRun && NUMBER_RUN.test(text);
    for (const detector of this.detectors) {
      if (text.length < detector.minLength || (detector.needsNumberRun && !numberRun)) continue;
      result = detector.redact(result, tally);
    }
    if (this.patterns.size > 0) result = this.patterns.redact(result, tally);
    if (memo && result === text) {
      if (this.clean.size >= MEMO_ENTRIES) this.clean.clear();
      this.clean.add(text);
    }
    return result;
  }
}
