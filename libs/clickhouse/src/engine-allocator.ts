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
 * The decay (ms) that jemalloc options ask for: the last `dirty_decay_ms:N` of `options`
 * ("name:value" pairs separated by commas, as JE_MALLOC_CONF holds them; a later one overrides an
 * earlier one, as jemalloc reads them), or undefined when they name none.
 */
export function decayAskedFor(options: string): number | undefined {
  let asked: number | undefined;
  for (const option of options.split(',')) {
    const match = /^\s*dirty_decay_ms:(-?\d+)\s*$/.exec(option);
    if (match) asked = Number(match[1]);
  }
  return asked;
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
