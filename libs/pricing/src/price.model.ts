/*
 * Prices are USD per 1,000,000 tokens (the unit every provider publishes), so table rows can be
 * checked against a pricing page by eye. Dates are UTC days: a row is in force from 00:00 UTC of
 * its effectiveFrom until the next row of the same model and provider.
 */

/** 'chat' rows are text generation; 'embedding' rows have no output tokens (output price 0). */
export type ModelKind = 'chat' | 'embedding';

/** One row of the bundled price table: a model's list price from a date on. */
export interface ModelPrice {
  /** Canonical model id as the provider spells it ('gpt-4o', 'claude-3-5-sonnet', 'gemini-2.5-pro'). */
  model: string;
  /** Canonical provider (as libs/semconv provider.ts names it) whose list price this is. */
  provider: string;
  /** Other spellings of the same model; matched like `model`. */
  aliases?: readonly string[];
  inputPerMTok: number;
  outputPerMTok: number;
  /** Absent: the provider has no cache-read discount, cache reads cost inputPerMTok. */
  cacheReadPerMTok?: number;
  /** Absent: the provider bills cache writes as ordinary input, at inputPerMTok. */
  cacheWritePerMTok?: number;
  /** 'YYYY-MM-DD' (UTC). */
  effectiveFrom: string;
  /** Default 'chat'. */
  kind?: ModelKind;
}

/**
 * A project's own price for a model (negotiated rate, fine-tune, self-hosted deployment), as stored
 * in PostgreSQL `model_price_overrides`. It comes from users, so PriceTable.withOverrides validates it.
 */
export interface PriceOverride {
  id: string;
  model: string;
  /** Only spans of this provider; absent or '' means any provider. */
  provider?: string;
  aliases?: readonly string[];
  inputPerMTok: number;
  outputPerMTok: number;
  cacheReadPerMTok?: number | null;
  cacheWritePerMTok?: number | null;
  /** 'YYYY-MM-DD', an ISO 8601 date-time with zone, or a Date (a timestamptz column); absent = always. */
  effectiveFrom?: string | Date;
}

/** The four per-token-class prices costOf needs, cache fallbacks already applied. */
export interface TokenPrices {
  inputPerMTok: number;
  outputPerMTok: number;
  cacheReadPerMTok: number;
  cacheWritePerMTok: number;
}

export type PriceSource = 'price_table' | 'override';

/**
 * How the span's model string reached the table row: the same string (or an alias), its base
 * after removing a snapshot suffix (date, '-latest', Bedrock/Vertex version), or the longest known
 * prefix. 'prefix' is a best guess the UI may want to show as such.
 */
export type PriceMatch = 'exact' | 'snapshot' | 'prefix';

/** The price in force for a model at an instant. */
export interface PriceQuote extends TokenPrices {
  /** The table's model id (or the override's), not the span's string. */
  model: string;
  /** Provider of the row; '' for an override that applies to every provider. */
  provider: string;
  effectiveFrom: string;
  /** Stored with the span's cost so a later table can be told apart: 'bundled:2026-11-30', 'override:<id>'. */
  version: string;
  source: PriceSource;
  match: PriceMatch;
}

/** Where a span's cost came from: a cost stated on the span wins over prices; 'none' marks an LLM span whose model has no price. */
export type CostSource = 'explicit' | PriceSource | 'none';
