import { randomUUID } from 'node:crypto';
import { badInput } from '@spanforge/errors';
import type { FeedbackInput, FeedbackRecord, ScoreConfig, ScoreType } from './feedback.model';

/** Size limits: a score is a judgement, not a document. */
export const FEEDBACK_LIMITS = { name: 100, comment: 4_000, textValue: 4_000, source: 100, id: 200 };

/** The fields of a feedback body (README.md, "Feedback"); anything else is most likely a typo, so it is refused rather than dropped. */
const FEEDBACK_FIELDS: ReadonlySet<string> = new Set(['traceId', 'spanId', 'name', 'value', 'comment', 'source', 'id']);

const HEX_TRACE = /^[0-9a-f]{32}$/;
const HEX_SPAN = /^[0-9a-f]{16}$/;

function optionalText(value: unknown, field: string, max: number): string {
  if (value === undefined || value === null) return '';
  if (typeof value !== 'string') throw badInput(`${field} must be a string`);
  if (value.length > max) throw badInput(`${field} must be at most ${max} characters`);
  return value;
}

/**
 * Checks a feedback body and turns it into the stored record: ids are hex, the name and texts fit
 * their limits, and the value has a type (number → NUMERIC, boolean → BOOLEAN, string → TEXT, or
 * CATEGORICAL when the name's config says so) that its config, when there is one, allows.
 */
export function validateFeedback(input: FeedbackInput, config: ScoreConfig | undefined): FeedbackRecord {
  if (typeof input !== 'object' || input === null || Array.isArray(input)) throw badInput('the body must be a JSON object');
  const unknown = Object.keys(input).filter((key) => !FEEDBACK_FIELDS.has(key));
  if (unknown.length > 0) {
    const named = unknown
      .slice(0, 5)
      .map((key) => JSON.stringify(key.slice(0, 50)))
      .join(', ');
    throw badInput(
      `unknown field${unknown.length === 1 ? '' : 's'} ${named}${unknown.length > 5 ? ', …' : ''}: feedback takes ${[...FEEDBACK_FIELDS].join(', ')}`,
    );
  }
  const traceId = typeof input.traceId === 'string' ? input.traceId.toLowerCase() : '';
  if (!HEX_TRACE.test(traceId) || /^0+$/.test(traceId)) throw badInput('traceId must be 32 hex characters (not all zero)');
  const spanId = input.spanId === undefined || input.spanId === null ? '' : String(input.spanId).toLowerCase();
  if (spanId !== '' && !HEX_SPAN.test(spanId)) throw badInput('spanId must be 16 hex characters');
  const name = optionalText(input.name, 'name', FEEDBACK_LIMITS.name).trim();
  if (name === '') throw badInput('name is required');
  const id = optionalText(input.id, 'id', FEEDBACK_LIMITS.id) || randomUUID();
  const comment = optionalText(input.comment, 'comment', FEEDBACK_LIMITS.comment);
  const source = optionalText(input.source, 'source', FEEDBACK_LIMITS.source);
  const value = input.value;
  let dataType: ScoreType;
  let valueNumber: number | null = null;
  let valueText = '';
  if (typeof value === 'number') {
    if (!Number.isFinite(value)) throw badInput('value must be a finite number');
    dataType = 'NUMERIC';
    valueNumber = value;
    valueText = String(value);
  } else if (typeof value === 'boolean') {
    dataType = 'BOOLEAN';
    valueNumber = value ? 1 : 0;
    valueText = String(value);
  } else if (typeof value === 'string') {
    if (value.length > FEEDBACK_LIMITS.textValue) throw badInput(`value must be at most ${FEEDBACK_LIMITS.textValue} characters`);
    dataType = config?.dataType === 'CATEGORICAL' ? 'CATEGORICAL' : 'TEXT';
    valueText = value;
  } else {
    throw badInput('value must be a number, a boolean or a string');
  }
  if (config) checkAgainstConfig(config, dataType, valueNumber, valueText);
  return { id, traceId, spanId, name, dataType, valueNumber, valueText, comment, source };
}

function checkAgainstConfig(config: ScoreConfig, dataType: ScoreType, valueNumber: number | null, valueText: string): void {
  if (config.dataType !== dataType) throw badInput(`score "${config.name}" is ${config.dataType}; got a ${dataType.toLowerCase()} value`);
  if (dataType === 'NUMERIC') {
    if (config.minValue !== null && valueNumber! < config.minValue)
      throw badInput(`score "${config.name}" must be at least ${config.minValue}`);
    if (config.maxValue !== null && valueNumber! > config.maxValue)
      throw badInput(`score "${config.name}" must be at most ${config.maxValue}`);
  }
  if (dataType === 'CATEGORICAL' && config.categories && !config.categories.includes(valueText)) {
    throw badInput(`score "${config.name}" must be one of: ${config.categories.join(', ')}`);
  }
}

/** A score config from an admin or project user: a clear error for each impossible combination. */
export function validateScoreConfig(input: {
  name: string;
  dataType: ScoreType;
  minValue?: number | null;
  maxValue?: number | null;
  categories?: string[] | null;
}): void {
  const name = (input.name ?? '').trim();
  if (name === '' || name.length > FEEDBACK_LIMITS.name) throw badInput(`name must be 1 to ${FEEDBACK_LIMITS.name} characters`);
  const hasRange = input.minValue != null || input.maxValue != null;
  if (hasRange && input.dataType !== 'NUMERIC') throw badInput('minValue and maxValue apply to NUMERIC scores only');
  if (input.minValue != null && input.maxValue != null && input.minValue > input.maxValue)
    throw badInput('minValue must not exceed maxValue');
  if (input.categories != null) {
    if (input.dataType !== 'CATEGORICAL') throw badInput('categories apply to CATEGORICAL scores only');
    if (input.categories.length === 0 || input.categories.length > 100) throw badInput('categories must list 1 to 100 values');
    if (input.categories.some((c) => c.length === 0 || c.length > 200)) throw badInput('each category must be 1 to 200 characters');
  }
}
