import type { ClickHouseClient } from '@clickhouse/client';
import { namedStatement } from './statements';

/**
 * Empties the embedded engine's query condition cache every `intervalSeconds` (0: never), and
 * returns what stops it (waiting for an emptying under way).
 *
 * The cache remembers, per part and per filter, which granules the filter matched nothing in: it
 * is what makes the upkeep's second and third lookups of a round's trace ids cheap. Our statements
 * carry their values written in (inline-parameters.ts), so nearly every statement's filter is new,
 * and each leaves an entry per part it read that no later statement asks for. The engine evicts
 * only when the entries' counted size reaches
 * `query_condition_cache_size` (100 MiB), and it counts about a third of what they hold: measured
 * on the embedded engine, 122,000 entries counted 7.4 MiB and held 22.6 MiB of the allocator's
 * memory, nearly all in blocks of up to 1 KiB. Under a soak's load the all-in-one gained ~1,000
 * entries (~65 KB counted) a minute, so the cache would grow for about a day, to ~300 MiB held, in
 * a process whose whole RSS is about 1 GiB (docs/scaling.md, "Memory of the all-in-one").
 * The server setting that caps it cannot be given to the embedded engine, so it is emptied
 * instead: what is lost is at most one round's cheap later lookups per emptying.
 *
 * A ClickHouse server keeps its cache within the operator's `query_condition_cache_size`, and this
 * is not run there.
 */
export function emptyConditionCacheEvery(
  clickhouse: ClickHouseClient,
  intervalSeconds: number,
  log: { info(message: string): void; warn(message: string): void },
): () => Promise<void> {
  if (intervalSeconds === 0) return async () => {};
  log.info(`empties the engine's query condition cache every ${intervalSeconds} s (CLICKHOUSE_CONDITION_CACHE_SECONDS; 0: never)`);
  let emptying: Promise<void> | undefined;
  const empty = async () => {
    try {
      await clickhouse.command({ query: 'SYSTEM DROP QUERY CONDITION CACHE', ...namedStatement('engine.empty_condition_cache') });
    } catch (error) {
      // The next interval tries again; until one succeeds the cache grows as it would without this.
      log.warn(`emptying the engine's query condition cache failed (tried again in ${intervalSeconds} s): ${(error as Error).message}`);
    } finally {
      emptying = undefined;
    }
  };
  const timer = setInterval(() => {
    // One at a time: an emptying still waiting for the engine is enough.
    emptying ??= empty();
  }, intervalSeconds * 1000);
  // Housekeeping: it never keeps the process alive.
  timer.unref();
  return async () => {
    clearInterval(timer);
    await emptying;
  };
}
