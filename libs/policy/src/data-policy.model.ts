/**
 * A project's data policy: how long its data is kept, how much of the prompts and completions is
 * kept, and what is redacted before anything is stored.
 */

/** What is kept of one side of the message contents (inputs or outputs). */
export const CAPTURE_MODES = ['FULL', 'HASH', 'DROP'] as const;
/** FULL keeps the content (still redacted); HASH keeps `sha256:<hex>` of it; DROP keeps nothing. */
export type CaptureMode = (typeof CAPTURE_MODES)[number];

/** The built-in detectors, in the order they run (detectors.ts explains what each matches). */
export const DETECTORS = ['JWT', 'API_KEY', 'EMAIL', 'CREDIT_CARD', 'IP_ADDRESS', 'PHONE'] as const;
export type Detector = (typeof DETECTORS)[number];

export interface CapturePolicy {
  readonly inputs: CaptureMode;
  readonly outputs: CaptureMode;
  /** Longest kept content in UTF-8 bytes, marker included; null = no cap. */
  readonly maxContentBytes: number | null;
}

export interface RedactionPolicy {
  /** Built-in detectors, each match replaced by `[REDACTED:<DETECTOR>]`; in DETECTORS order, no duplicates. */
  readonly detectors: readonly Detector[];
  /** RE2-syntax expressions, each match replaced by `[REDACTED:PATTERN]`. */
  readonly patterns: readonly string[];
  /** Attribute keys never stored: exact keys, or `prefix.*` for every key under `prefix.`. */
  readonly dropAttributes: readonly string[];
}

/** A validated policy (validatePolicy builds one; it is never changed afterwards). */
export interface DataPolicy {
  /** Days data is kept after its start time; null = kept until erased. */
  readonly retentionDays: number | null;
  readonly capture: CapturePolicy;
  readonly redaction: RedactionPolicy;
}

/** Keep everything for ever, redact nothing: what a project without a policy gets. */
export const DEFAULT_POLICY: DataPolicy = Object.freeze({
  retentionDays: null,
  capture: Object.freeze({ inputs: 'FULL', outputs: 'FULL', maxContentBytes: null }),
  redaction: Object.freeze({ detectors: Object.freeze([]), patterns: Object.freeze([]), dropAttributes: Object.freeze([]) }),
});

/**
 * The bounds validatePolicy enforces. Patterns are bounded in count, length and compiled size so
 * that the work per character of content stays small and fixed (the engine is linear in the text,
 * with a factor that grows with the program); the other bounds keep a policy a policy.
 */
export const POLICY_LIMITS = Object.freeze({
  minRetentionDays: 1,
  /** Ten years. */
  maxRetentionDays: 3650,
  /** Room for some content and the truncation marker. */
  minContentBytes: 256,
  /** 16 MiB: larger than any value the OTLP decoder keeps, so a cap above it would never apply. */
  maxContentBytes: 16 * 1024 * 1024,
  maxPatterns: 20,
  /** UTF-16 code units of the pattern source. */
  maxPatternLength: 256,
  /** RE2 program instructions: `(?i)[a-z0-9._%+-]{1,64}@[a-z0-9.-]{1,255}` is 639, `(abc|def){500}` 4502 (refused). */
  maxPatternProgramSize: 2000,
  maxDropAttributes: 100,
  maxDropAttributeLength: 256,
});

/** What setDataPolicy takes: every field optional; absent ones keep the base policy's value, null resets to the default. */
export interface DataPolicyInput {
  retentionDays?: number | null;
  capture?: { inputs?: CaptureMode | null; outputs?: CaptureMode | null; maxContentBytes?: number | null } | null;
  redaction?: {
    detectors?: readonly Detector[] | null;
    patterns?: readonly string[] | null;
    dropAttributes?: readonly string[] | null;
  } | null;
}
