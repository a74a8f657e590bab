import { badInput } from '@spanforge/errors';
import { compilePattern } from './custom-pattern';
import {
  CAPTURE_MODES,
  DEFAULT_POLICY,
  DETECTORS,
  POLICY_LIMITS,
  type CaptureMode,
  type DataPolicy,
  type DataPolicyInput,
  type Detector,
} from './data-policy.model';

/** A value as it appears in a message: strings quoted, long ones shortened. */
function shown(value: unknown): string {
  if (typeof value === 'string') return JSON.stringify(value.length > 80 ? `${value.slice(0, 77)}...` : value);
  if (value === undefined) return 'undefined';
  if (typeof value === 'number' || typeof value === 'boolean' || value === null) return String(value);
  return typeof value;
}

function wholeNumberIn(value: unknown, min: number, max: number): value is number {
  return typeof value === 'number' && Number.isInteger(value) && value >= min && value <= max;
}

/** undefined keeps the base policy's value; null resets the field to the default. */
function pick<T>(given: T | null | undefined, base: T, fallback: T): T {
  if (given === undefined) return base;
  return given === null ? fallback : given;
}

function captureMode(name: string, value: unknown, problems: string[]): CaptureMode {
  if ((CAPTURE_MODES as readonly unknown[]).includes(value)) return value as CaptureMode;
  problems.push(`${name} ${shown(value)} is not a capture mode; use ${CAPTURE_MODES.join(', ')}`);
  return 'FULL';
}

function listOf(name: string, value: unknown, problems: string[]): readonly unknown[] {
  if (Array.isArray(value)) return value;
  problems.push(`${name} must be a list, got ${shown(value)}`);
  return [];
}

function detectors(value: unknown, problems: string[]): Detector[] {
  const chosen = new Set<Detector>();
  listOf('redaction.detectors', value, problems).forEach((detector, i) => {
    if ((DETECTORS as readonly unknown[]).includes(detector)) chosen.add(detector as Detector);
    else problems.push(`redaction.detectors[${i}] ${shown(detector)} is not a detector; known: ${DETECTORS.join(', ')}`);
  });
  return DETECTORS.filter((detector) => chosen.has(detector));
}

function patterns(value: unknown, problems: string[]): string[] {
  const list = listOf('redaction.patterns', value, problems);
  const unique = [...new Set(list)];
  if (unique.length > POLICY_LIMITS.maxPatterns) {
    problems.push(`redaction.patterns has ${unique.length} patterns; at most ${POLICY_LIMITS.maxPatterns} are allowed`);
  }
  unique.forEach((pattern, i) => {
    if (typeof pattern !== 'string') {
      problems.push(`redaction.patterns[${i}] must be a string, got ${shown(pattern)}`);
      return;
    }
    const compiled = compilePattern(pattern);
    if (typeof compiled === 'string') problems.push(`redaction.patterns[${i}] ${shown(pattern)} ${compiled}`);
  });
  return unique.filter((pattern): pattern is string => typeof pattern === 'string');
}

/**
 * Keys are exact, except a final `.*`, which stands for every key under the prefix before it
 * (`http.request.header.*` drops `http.request.header.cookie`, not `http.request.header`).
 */
function dropAttributes(value: unknown, problems: string[]): string[] {
  const unique = [...new Set(listOf('redaction.dropAttributes', value, problems))];
  if (unique.length > POLICY_LIMITS.maxDropAttributes) {
    problems.push(`redaction.dropAttributes has ${unique.length} keys; at most ${POLICY_LIMITS.maxDropAttributes} are allowed`);
  }
  unique.forEach((key, i) => {
    const name = `redaction.dropAttributes[${i}]`;
    if (typeof key !== 'string' || key.length === 0) problems.push(`${name} must be a non-empty key, got ${shown(key)}`);
    else if (key.length > POLICY_LIMITS.maxDropAttributeLength) {
      problems.push(`${name} is ${key.length} characters long; at most ${POLICY_LIMITS.maxDropAttributeLength} are allowed`);
    } else if (key.includes('*') && !(key.indexOf('*') === key.length - 1 && key.endsWith('.*') && key.length > 2)) {
      problems.push(`${name} ${shown(key)}: '*' is allowed only as a final '.*' after a prefix, as in "http.request.header.*"`);
    }
  });
  return unique.filter((key): key is string => typeof key === 'string');
}

/**
 * Checks a policy as given to setDataPolicy and returns it complete and normalised: absent fields
 * take `base`'s values (the project's current policy, or the default), null resets a field to the
 * default; detectors in running order without duplicates, duplicate patterns and keys removed.
 * Throws one BAD_USER_INPUT DomainError naming every bad value.
 *
 * Bounds: retentionDays 1–3650 (null = keep); maxContentBytes 256 B–16 MiB (null = no cap); at most
 * 20 patterns of at most 256 characters, RE2 syntax, compiling to at most 2000 instructions and
 * not matching the empty string; at most 100 dropAttributes of at most 256 characters.
 */
export function validatePolicy(input: DataPolicyInput, base: DataPolicy = DEFAULT_POLICY): DataPolicy {
  const problems: string[] = [];
  const given: DataPolicyInput = typeof input === 'object' && input !== null ? input : {};
  if (given !== input) problems.push(`the policy must be an object, got ${shown(input)}`);
  // A null group resets each of its fields, like a null field.
  const capture = given.capture === null ? { inputs: null, outputs: null, maxContentBytes: null } : (given.capture ?? {});
  const redaction = given.redaction === null ? { detectors: null, patterns: null, dropAttributes: null } : (given.redaction ?? {});

  const retentionDays = pick(given.retentionDays, base.retentionDays, DEFAULT_POLICY.retentionDays);
  if (retentionDays !== null && !wholeNumberIn(retentionDays, POLICY_LIMITS.minRetentionDays, POLICY_LIMITS.maxRetentionDays)) {
    problems.push(
      `retentionDays must be a whole number of days from ${POLICY_LIMITS.minRetentionDays} to ${POLICY_LIMITS.maxRetentionDays} ` +
        `(or null to keep data until erased), got ${shown(retentionDays)}`,
    );
  }
  const maxContentBytes = pick(capture.maxContentBytes, base.capture.maxContentBytes, DEFAULT_POLICY.capture.maxContentBytes);
  if (maxContentBytes !== null && !wholeNumberIn(maxContentBytes, POLICY_LIMITS.minContentBytes, POLICY_LIMITS.maxContentBytes)) {
    problems.push(
      `capture.maxContentBytes must be a whole number of bytes from ${POLICY_LIMITS.minContentBytes} to ${POLICY_LIMITS.maxContentBytes} ` +
        `(or null for no cap), got ${shown(maxContentBytes)}`,
    );
  }
  const policy: DataPolicy = {
    retentionDays,
    capture: {
      inputs: captureMode('capture.inputs', pick(capture.inputs, base.capture.inputs, DEFAULT_POLICY.capture.inputs), problems),
      outputs: captureMode('capture.outputs', pick(capture.outputs, base.capture.outputs, DEFAULT_POLICY.capture.outputs), problems),
      maxContentBytes,
    },
    redaction: {
      detectors: detectors(pick(redaction.detectors, base.redaction.detectors, DEFAULT_POLICY.redaction.detectors), problems),
      patterns: patterns(pick(redaction.patterns, base.redaction.patterns, DEFAULT_POLICY.redaction.patterns), problems),
      dropAttributes: dropAttributes(
        pick(redaction.dropAttributes, base.redaction.dropAttributes, DEFAULT_POLICY.redaction.dropAttributes),
        problems,
      ),
    },
  };
  if (problems.length > 0) throw badInput(`invalid data policy: ${problems.join('; ')}`);
  return freeze(policy);
}

/** Compiled policies are cached and shared: nothing may change one afterwards. */
function freeze(policy: DataPolicy): DataPolicy {
  Object.freeze(policy.capture);
  Object.freeze(policy.redaction.detectors);
  Object.freeze(policy.redaction.patterns);
  Object.freeze(policy.redaction.dropAttributes);
  Object.freeze(policy.redaction);
  return Object.freeze(policy);
}
