import { badInput } from '@spanforge/errors';
import { boundaryPrefixes, modelKey, snapshotBase } from './model-key';
import type { PriceMatch, PriceOverride, PriceQuote, PriceSource } from './price.model';
import { utcDayMs, validatePriceOverrides } from './price-override.validation';
import { BUNDLED_PRICES, PRICE_TABLE_VERSION } from './prices.data';

/** A row as the index keeps it: its start instant and its quote, one frozen copy per match kind. */
interface IndexedRow {
  fromMs: number;
  quote: Omit<PriceQuote, 'match'>;
  byMatch: Partial<Record<PriceMatch, PriceQuote>>;
}

/** One model's rows, per provider, each list sorted by start. */
interface ModelRows {
  model: string;
  byProvider: Map<string, IndexedRow[]>;
  /** Rows of the first provider listed for the model: used when the span's provider has none. */
  fallback: IndexedRow[];
}

interface RowInput {
  model: string;
  provider: string;
  aliases: readonly string[];
  fromMs: number;
  quote: Omit<PriceQuote, 'match'>;
}

/** key (model or alias) -> rows. Aliases share the model's ModelRows object. */
type KeyIndex = Map<string, ModelRows>;

interface Resolution {
  key: string;
  match: PriceMatch;
}

// Distinct model strings seen by one worker are in the hundreds; the bound only stops a flood of
// unique junk names (which are cached too, as misses) from growing memory without limit.
const RESOLUTION_CACHE_LIMIT = 10_000;
const NS_PER_MS = 1_000_000n;

function buildIndex(rows: readonly RowInput[], onConflict: (key: string, first: string, second: string) => void): KeyIndex {
  const index: KeyIndex = new Map();
  const byModel = new Map<string, ModelRows>();
  for (const row of rows) {
    const modelId = modelKey(row.model);
    let entry = byModel.get(modelId);
    if (!entry) {
      entry = { model: row.model, byProvider: new Map(), fallback: [] };
      byModel.set(modelId, entry);
    }
    const list = entry.byProvider.get(row.provider) ?? [];
    if (list.length === 0) entry.byProvider.set(row.provider, list);
    if (entry.byProvider.size === 1) entry.fallback = list;
    list.push({ fromMs: row.fromMs, quote: row.quote, byMatch: {} });
    for (const key of [modelId, ...row.aliases.map(modelKey)]) {
      const owner = index.get(key);
      if (owner && owner !== entry) onConflict(key, owner.model, row.model);
      else index.set(key, entry);
    }
  }
  for (const entry of byModel.values()) for (const list of entry.byProvider.values()) list.sort((a, b) => a.fromMs - b.fromMs);
  return index;
}

/** The row in force at t: the last one started at or before t. */
function rowAt(rows: readonly IndexedRow[] | undefined, t: number, beforeFirst: 'first' | 'none'): IndexedRow | undefined {
  if (!rows || rows.length === 0) return undefined;
  for (let i = rows.length - 1; i >= 0; i--) if (rows[i].fromMs <= t) return rows[i];
  return beforeFirst === 'first' ? rows[0] : undefined;
}

function withMatch(row: IndexedRow, match: PriceMatch): PriceQuote {
  return (row.byMatch[match] ??= Object.freeze({ ...row.quote, match }));
}

/** Date, epoch milliseconds, or epoch nanoseconds as OTLP carries them (bigint). */
export type Instant = Date | number | bigint;

function epochMs(at: Instant): number {
  const ms = typeof at === 'bigint' ? Number(at / NS_PER_MS) : typeof at === 'number' ? at : at.getTime();
  // A span without a usable time is priced at the newest price rather than left unpriced.
  return Number.isFinite(ms) ? ms : Number.POSITIVE_INFINITY;
}

/** What a bundled price or an override has in common; cache prices default to the input price. */
interface PriceRowSource {
  model: string;
  provider: string;
  inputPerMTok: number;
  outputPerMTok: number;
  cacheReadPerMTok?: number | null;
  cacheWritePerMTok?: number | null;
  effectiveFrom: string;
}

function rowInput(p: PriceRowSource, aliases: readonly string[], fromMs: number, version: string, source: PriceSource): RowInput {
  return {
    model: p.model,
    provider: p.provider,
    aliases,
    fromMs,
    quote: {
      model: p.model,
      provider: p.provider,
      inputPerMTok: p.inputPerMTok,
      outputPerMTok: p.outputPerMTok,
      cacheReadPerMTok: p.cacheReadPerMTok ?? p.inputPerMTok,
      cacheWritePerMTok: p.cacheWritePerMTok ?? p.inputPerMTok,
      effectiveFrom: p.effectiveFrom,
      version,
      source,
    },
  };
}

function bundledRows(): RowInput[] {
  const version = `bundled:${PRICE_TABLE_VERSION}`;
  return BUNDLED_PRICES.map((p) => rowInput(p, p.aliases ?? [], utcDayMs(p.effectiveFrom), version, 'price_table'));
}

let bundledTable: PriceTable | undefined;

/**
 * Model prices over time: the bundled list prices, optionally under one project's overrides.
 * Immutable; lookups are memoised per instance, so keep one table per project and reuse it.
 *
 * Matching (the span's model string, then the table's keys, both through modelKey):
 * 1. exact model id or alias;
 * 2. the string without snapshot suffixes (dates, '-latest', Bedrock '-v2:0', Vertex '@20241022');
 * 3. the longest known prefix ending on a '-', ':' or '@' boundary ('gpt-4o-mini-x' -> 'gpt-4o-mini',
 *    never 'gpt-4o').
 * Overrides and bundled rows share one key space, so the most specific key wins whichever layer it
 * comes from; at that key an override in force beats the bundled price. A span no override is in
 * force for is priced exactly as the bundled table alone would price it.
 *
 * Time: a row is in force from its effectiveFrom until the next row of the same model and provider.
 * An override does not apply before its effectiveFrom (the project's rate starts then). A span older
 * than a model's first bundled row gets that first row: launch days are approximate and clocks skew,
 * and a known model should not show as unpriced.
 */
export class PriceTable {
  private readonly resolutions = new Map<string, Resolution | null>();

  private constructor(
    private readonly bundledIndex: KeyIndex,
    private readonly overrideIndex: KeyIndex | undefined,
    /** The table without overrides, for spans no override covers (see lookup). */
    private readonly withoutOverrides: PriceTable | undefined,
  ) {}

  /** The table built from prices.data.ts, built once per process. */
  static bundled(): PriceTable {
    if (!bundledTable) {
      const index = buildIndex(bundledRows(), (key, first, second) => {
        throw new Error(`price table: '${key}' names both ${first} and ${second}`);
      });
      bundledTable = new PriceTable(index, undefined, undefined);
    }
    return bundledTable;
  }

  /**
   * The bundled prices under this project's overrides (its complete list: it replaces, not adds
   * to, overrides this table already has). Throws a BAD_USER_INPUT DomainError listing every invalid
   * override.
   */
  withOverrides(overrides: readonly PriceOverride[]): PriceTable {
    const valid = validatePriceOverrides(overrides);
    const conflicts: string[] = [];
    const rows = valid.map((o) => rowInput(o, o.aliases, o.effectiveFromMs, `override:${o.id}`, 'override'));
    const index = buildIndex(rows, (key, first, second) => conflicts.push(`price overrides: '${key}' names both ${first} and ${second}`));
    if (conflicts.length > 0) throw badInput(conflicts.join('; '));
    return new PriceTable(this.bundledIndex, index, this.withoutOverrides ?? this);
  }

  /** The price in force for the model at that instant, or undefined when no row matches the model. */
  lookup(pricingModel: string, provider: string, at: Instant): PriceQuote | undefined {
    const resolution = this.resolve(pricingModel);
    if (!resolution) return undefined;
    const t = epochMs(at);
    const override = this.overrideIndex?.get(resolution.key);
    if (override) {
      // A provider-specific override first, then one for any provider.
      const row = rowAt(override.byProvider.get(provider), t, 'none') ?? rowAt(override.byProvider.get(''), t, 'none');
      if (row) return withMatch(row, resolution.match);
    }
    const bundled = this.bundledIndex.get(resolution.key);
    // The key is an override's name and that override is not in force yet: price the span as if
    // the override did not exist (a shorter bundled key may still match it).
    if (!bundled) return this.withoutOverrides?.lookup(pricingModel, provider, at);
    // The provider's own row when it has one (Azure or Bedrock prices may differ), else the list price.
    const row = rowAt(bundled.byProvider.get(provider) ?? bundled.fallback, t, 'first');
    return row && withMatch(row, resolution.match);
  }

  private knows(key: string): boolean {
    return this.bundledIndex.has(key) || (this.overrideIndex?.has(key) ?? false);
  }

  private resolve(pricingModel: string): Resolution | null {
    const cached = this.resolutions.get(pricingModel);
    if (cached !== undefined) return cached;
    const resolution = this.resolveUncached(pricingModel);
    if (this.resolutions.size >= RESOLUTION_CACHE_LIMIT) {
      // Evict the oldest entry (Map keeps insertion order): cheap, and good enough for a hot set.
      this.resolutions.delete(this.resolutions.keys().next().value as string);
    }
    this.resolutions.set(pricingModel, resolution);
    return resolution;
  }

  private resolveUncached(pricingModel: string): Resolution | null {
    const key = modelKey(pricingModel);
    if (key === '') return null;
    if (this.knows(key)) return { key, match: 'exact' };
    const base = snapshotBase(key);
    if (base !== key && this.knows(base)) return { key: base, match: 'snapshot' };
    for (const prefix of boundaryPrefixes(key)) if (this.knows(prefix)) return { key: prefix, match: 'prefix' };
    return null;
  }
}
