import { namedStatement } from './statements';
import type { ClickHouseClient } from './clickhouse.client';

/**
 * The embedded engine's memory allocator: jemalloc, compiled into libchdb, which takes its options
 * from JE_MALLOC_CONF once, when the library is loaded (setEngineAllocatorOptions in
 * @spanforge/config sets the default just before). Its decay, how soon the pages a statement freed
 * are handed back to the system, bounds the all-in-one's memory under continuous ingest
 * (docs/scaling.md, "Memory of the all-in-one").
 */

/**
 * The decay (ms) that jemalloc options ask for, read as jemalloc reads them: "name:value" pairs
 * separated by commas, names of letters, digits and underscores; it stops at the first pair that is
 * not one, and a later valid `dirty_decay_ms` overrides an earlier one. Its value is a C integer
 * (strtol in base 0: leading blanks, a sign, 0x for hexadecimal, a leading 0 for octal) of -1 or
 * more, nothing after it; an invalid one is ignored. Undefined when no valid one is named.
 */
export function decayAskedFor(options: string): number | undefined {
  let asked: number | undefined;
  for (const pair of options.split(',')) {
    const option = /^([A-Za-z0-9_]+):(.*)$/s.exec(pair);
    if (!option) break;
    if (option[1] !== 'dirty_decay_ms') continue;
    const value = cInteger(option[2]!);
    if (value !== undefined && value >= -1) asked = value;
  }
  return asked;
}

/** `text` as strtol(text, &end, 0) reads it when it reads all of it, else undefined. */
function cInteger(text: string): number | undefined {
  const match = /^[ \t\n\v\f\r]*([+-]?)(?:0[xX]([0-9a-fA-F]+)|(0[0-7]*)|([1-9][0-9]*))$/.exec(text);
  if (!match) return undefined;
  const [, sign, hex, octal, decimal] = match;
  const magnitude = hex !== undefined ? parseInt(hex, 16) : octal !== undefined ? parseInt(octal, 8) : parseInt(decimal!, 10);
  return sign === '-' ? -magnitude : magnitude;
}

/** The decay (ms; -1: never) in the text of system.jemalloc_stats, or null without its line (an engine built without jemalloc). */
export function decayInStats(stats: string): number | null {
  const decay = /^[ \t]*opt\.dirty_decay_ms: (-?\d+)/m.exec(stats)?.[1];
  return decay === undefined ? null : Number(decay);
}

/** The decay (ms; -1: never) the embedded engine's allocator runs with, or null when its statistics do not say. */
export async function engineAllocatorDecayMs(clickhouse: ClickHouseClient): Promise<number | null> {
  const result = await clickhouse.query({
    query: 'SELECT * FROM system.jemalloc_stats',
    format: 'TabSeparatedRaw',
    ...namedStatement('engine.allocator_stats'),
  });
  return decayInStats(await result.text());
}

/** When an allocator with `decayMs` hands freed pages back, in words: "after 250 ms", "never" (-1), or that its statistics do not say (null). */
export function decayInWords(decayMs: number | null): string {
  if (decayMs === null) return 'at a time its statistics do not name';
  return decayMs < 0 ? 'never' : `after ${decayMs} ms`;
}
