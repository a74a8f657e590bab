import { badInput } from '@spanforge/errors';
import { modelKey } from './model-key';
import type { PriceOverride } from './price.model';

/** An override checked and reduced to what the table needs. */
export interface ValidPriceOverride {
  id: string;
  model: string;
  provider: string;
  aliases: readonly string[];
  inputPerMTok: number;
  outputPerMTok: number;
  cacheReadPerMTok: number | undefined;
  cacheWritePerMTok: number | undefined;
  effectiveFrom: string;
  effectiveFromMs: number;
}

// Matches the model_price_overrides.model CHECK in PostgreSQL.
const MAX_MODEL_LENGTH = 200;
// No list price is within three orders of magnitude of this; the bound keeps tokens x micro-dollar
// products far below 2^53 for any plausible span (see costOf).
const MAX_PRICE_PER_MTOK = 1_000_000;
const UTC_DAY = /^(\d{4})-(\d{2})-(\d{2})$/;
// A date-time must say its zone: a zone-less one would be read in the server's zone.
const ISO_DATE_TIME = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(?::\d{2}(?:\.\d+)?)?(?:Z|[+-]\d{2}:\d{2})$/;

/** Epoch ms of 00:00 UTC on a 'YYYY-MM-DD' day, or NaN when it is not a real calendar day. */
export function utcDayMs(day: string): number {
  const m = UTC_DAY.exec(day);
  if (!m) return NaN;
  const [year, month, date] = [Number(m[1]), Number(m[2]), Number(m[3])];
  const ms = Date.UTC(year, month - 1, date);
  const back = new Date(ms);
  // Date.UTC rolls '2025-02-30' over to March; a round trip catches it.
  return back.getUTCFullYear() === year && back.getUTCMonth() === month - 1 && back.getUTCDate() === date ? ms : NaN;
}

function effectiveFromMs(value: unknown): number {
  if (value === undefined || value === null) return 0;
  if (value instanceof Date) return value.getTime();
  if (typeof value !== 'string') return NaN;
  if (UTC_DAY.test(value)) return utcDayMs(value);
  if (!ISO_DATE_TIME.test(value)) return NaN;
  const ms = Date.parse(value);
  // Reject impossible days that Date.parse would roll over.
  return Number.isFinite(ms) && Number.isFinite(utcDayMs(value.slice(0, 10))) ? ms : NaN;
}

function isPrice(value: unknown): value is number {
  return typeof value === 'number' && Number.isFinite(value) && value >= 0 && value <= MAX_PRICE_PER_MTOK;
}

function priceProblem(name: string, value: unknown, optional: boolean): string | undefined {
  if (optional && (value === undefined || value === null)) return undefined;
  if (isPrice(value)) return undefined;
  return `${name} must be a number of USD per 1M tokens between 0 and ${MAX_PRICE_PER_MTOK} (got ${String(value)})`;
}

function problemsOf(o: PriceOverride): string[] {
  const problems: string[] = [];
  if (typeof o.model !== 'string' || modelKey(o.model) === '' || o.model.length > MAX_MODEL_LENGTH) {
    problems.push(`model must be a non-empty name of at most ${MAX_MODEL_LENGTH} characters`);
  }
  if (o.provider !== undefined && typeof o.provider !== 'string') problems.push('provider must be a string');
  if (o.aliases !== undefined && (!Array.isArray(o.aliases) || o.aliases.some((a) => typeof a !== 'string' || modelKey(a) === ''))) {
    problems.push('aliases must be non-empty model names');
  }
  for (const [name, optional] of [
    ['inputPerMTok', false],
    ['outputPerMTok', false],
    ['cacheReadPerMTok', true],
    ['cacheWritePerMTok', true],
  ] as const) {
    const problem = priceProblem(name, o[name], optional);
    if (problem) problems.push(problem);
  }
  if (!Number.isFinite(effectiveFromMs(o.effectiveFrom))) {
    problems.push(`effectiveFrom must be a date 'YYYY-MM-DD' or an ISO 8601 date-time with a zone (got ${String(o.effectiveFrom)})`);
  }
  return problems;
}

/**
 * Checks overrides coming from users and lists every problem in one error (code BAD_USER_INPUT),
 * each prefixed with the override's id, so a form can show them all at once.
 */
export function validatePriceOverrides(overrides: readonly PriceOverride[]): ValidPriceOverride[] {
  const problems: string[] = [];
  const seen = new Set<string>();
  const valid: ValidPriceOverride[] = [];
  overrides.forEach((o, index) => {
    const label = typeof o.id === 'string' && o.id !== '' ? `price override ${o.id}` : `price override #${index + 1}`;
    const own = problemsOf(o);
    if (typeof o.id !== 'string' || o.id === '') own.unshift('id must be a non-empty string');
    if (own.length > 0) {
      problems.push(...own.map((p) => `${label}: ${p}`));
      return;
    }
    const provider = o.provider ?? '';
    const fromMs = effectiveFromMs(o.effectiveFrom);
    // Two prices for one model, provider and instant would make the price depend on list order.
    const identity = `${modelKey(o.model)}|${provider}|${fromMs}`;
    if (seen.has(identity)) {
      problems.push(`${label}: another override already sets ${o.model} (${provider || 'any provider'}) from the same instant`);
      return;
    }
    seen.add(identity);
    valid.push({
      id: o.id,
      model: o.model.trim(),
      provider,
      aliases: o.aliases ?? [],
      inputPerMTok: o.inputPerMTok,
      outputPerMTok: o.outputPerMTok,
      cacheReadPerMTok: o.cacheReadPerMTok ?? undefined,
      cacheWritePerMTok: o.cacheWritePerMTok ?? undefined,
      effectiveFrom: o.effectiveFrom instanceof Date ? o.effectiveFrom.toISOString() : (o.effectiveFrom ?? '1970-01-01'),
      effectiveFromMs: fromMs,
    });
  });
  if (problems.length > 0) throw badInput(problems.join('; '));
  return valid;
}
