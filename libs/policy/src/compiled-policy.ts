import { setAttribute } from '@spanforge/otlp';
import { ContentRule, type Outcome } from './content-capture';
import { ContentKeys } from './content-keys';
import type { DataPolicy } from './data-policy.model';
import { TextRedactor } from './text-redactor';

type AttributeMap = Record<string, string>;

/**
 * The parts of a stored span a policy reads and writes: a structural subset of the worker's row
 * (libs/ingest SpanRow), so the row is passed as it is. The span's name, ids and the columns
 * derived from attributes (session, user, model...) are left alone.
 */
export interface PolicySpan {
  attributes: AttributeMap;
  resource_attributes: AttributeMap;
  /** Event names, parallel to `events.attributes`; they tell a GenAI message event's contents apart. */
  readonly 'events.name'?: readonly string[];
  'events.attributes': AttributeMap[];
  'links.attributes': AttributeMap[];
  input: string;
  output: string;
  status_message: string;
  /** Keys whose values are JSON; a key dropped, hashed or cut leaves the list. */
  attribute_json_keys?: string[];
  /** Set to 1 when content was cut to maxContentBytes. */
  truncated?: number;
}

/** A GenAI event that arrived as an OTLP log record (libs/ingest SpanLogEventRow): its facts and its message contents. */
export interface PolicyLogEvent {
  readonly name: string;
  attributes: AttributeMap;
  input: string;
  output: string;
}

export interface CompiledPolicy {
  readonly policy: DataPolicy;
  /** True when the policy changes nothing that is stored: apply* then return at once. */
  readonly isNoop: boolean;
  /** Applies the policy to a span in place; returns the number of values redacted by detectors and patterns. */
  applyToSpan(span: PolicySpan): number;
  /** Applies the policy to a log event in place; returns the number of values redacted. */
  applyToLogEvent(event: PolicyLogEvent): number;
  /** One text through the detectors and patterns (no capture mode, no cap). */
  redactText(text: string): { text: string; redactions: number };
}

/** dropAttributes: exact keys, and `prefix.*` entries as prefixes ending with the dot. */
class DroppedKeys {
  private readonly exact: ReadonlySet<string>;
  private readonly prefixes: readonly string[];

  constructor(entries: readonly string[]) {
    this.exact = new Set(entries.filter((entry) => !entry.endsWith('.*')));
    this.prefixes = entries.filter((entry) => entry.endsWith('.*')).map((entry) => entry.slice(0, -1));
  }

  get active(): boolean {
    return this.exact.size > 0 || this.prefixes.length > 0;
  }

  has(key: string): boolean {
    if (this.exact.has(key)) return true;
    for (const prefix of this.prefixes) if (key.startsWith(prefix)) return true;
    return false;
  }
}

function removeFrom(list: string[] | undefined, key: string): void {
  const at = list === undefined ? -1 : list.indexOf(key);
  if (at >= 0) list!.splice(at, 1);
}

/**
 * A policy ready to apply: patterns compiled once, the content attributes learnt per name. Meant
 * to be built once per policy and kept (the worker caches one per project). `policy` must come
 * from validatePolicy; a pattern that does not compile throws.
 */
export function compilePolicy(policy: DataPolicy): CompiledPolicy {
  return new PolicyEngine(policy);
}

class PolicyEngine implements CompiledPolicy {
  readonly isNoop: boolean;
  private readonly redactor: TextRedactor;
  private readonly dropped: DroppedKeys;
  private readonly inputs: ContentRule;
  private readonly outputs: ContentRule;
  /** Content attributes need their own treatment only when a capture mode or the cap changes content. */
  private readonly contentKeys: ContentKeys | undefined;

  constructor(readonly policy: DataPolicy) {
    const { capture, redaction } = policy;
    this.redactor = new TextRedactor(redaction.detectors, redaction.patterns);
    this.dropped = new DroppedKeys(redaction.dropAttributes);
    this.inputs = new ContentRule(capture.inputs, capture.maxContentBytes, this.redactor);
    this.outputs = new ContentRule(capture.outputs, capture.maxContentBytes, this.redactor);
    const plainContent = this.inputs.isPlain && this.outputs.isPlain;
    this.contentKeys = plainContent ? undefined : new ContentKeys();
    this.isNoop = plainContent && !this.redactor.active && !this.dropped.active;
  }

  applyToSpan(span: PolicySpan): number {
    if (this.isNoop) return 0;
    const outcome: Outcome = { redactions: 0, truncated: false };
    this.applyToAttributes(span.attributes, outcome, undefined, span.attribute_json_keys);
    this.applyToAttributes(span.resource_attributes, outcome, null);
    const events = span['events.attributes'];
    const names = span['events.name'];
    for (let i = 0; i < events.length; i++) this.applyToAttributes(events[i], outcome, names?.[i] ?? '');
    for (const link of span['links.attributes']) this.applyToAttributes(link, outcome, null);
    span.input = this.inputs.apply(span.input, outcome) ?? '';
    span.output = this.outputs.apply(span.output, outcome) ?? '';
    span.status_message = this.redactor.redact(span.status_message, outcome);
    if (outcome.truncated && span.truncated !== undefined) span.truncated = 1;
    return outcome.redactions;
  }

  applyToLogEvent(event: PolicyLogEvent): number {
    if (this.isNoop) return 0;
    const outcome: Outcome = { redactions: 0, truncated: false };
    this.applyToAttributes(event.attributes, outcome, event.name);
    event.input = this.inputs.apply(event.input, outcome) ?? '';
    event.output = this.outputs.apply(event.output, outcome) ?? '';
    return outcome.redactions;
  }

  redactText(text: string): { text: string; redactions: number } {
    const tally = { redactions: 0 };
    return { text: this.redactor.redact(text, tally), redactions: tally.redactions };
  }

  /**
   * Drops, then applies the capture modes to content attributes, then redacts the other values.
   * `eventName` is undefined for span attributes, an event's name for event attributes, and null
   * for maps that never carry contents (resource, links).
   */
  private applyToAttributes(attributes: AttributeMap, outcome: Outcome, eventName: string | null | undefined, jsonKeys?: string[]): void {
    if (this.dropped.active) {
      for (const key of Object.keys(attributes)) {
        if (!this.dropped.has(key)) continue;
        delete attributes[key];
        removeFrom(jsonKeys, key);
      }
    }
    let handled: Set<string> | undefined;
    if (this.contentKeys !== undefined && eventName !== null) {
      for (const [key, side] of this.contentKeys.contentKeysOf(attributes, eventName)) {
        const rule = side === 'input' ? this.inputs : this.outputs;
        const value = attributes[key];
        const truncatedBefore = outcome.truncated;
        outcome.truncated = false;
        const kept = rule.apply(value, outcome);
        const cut = outcome.truncated;
        outcome.truncated ||= truncatedBefore;
        if (kept === undefined) delete attributes[key];
        else if (kept !== value) setAttribute(attributes, key, kept);
        // A hash or JSON cut short is JSON no longer (redaction only replaces text inside it).
        if (kept === undefined || cut || rule.mode === 'HASH') removeFrom(jsonKeys, key);
        (handled ??= new Set()).add(key);
      }
    }
    if (!this.redactor.active) return;
    for (const key of Object.keys(attributes)) {
      if (handled?.has(key)) continue;
      const value = attributes[key];
      const redacted = this.redactor.redact(value, outcome);
      if (redacted !== value) setAttribute(attributes, key, redacted);
    }
  }
}
