import type { ClickHouseClient } from '@clickhouse/client';
import { namedStatement } from './statements';

/** The periodic emptying of emptyConditionCacheEvery. */
export interface ConditionCacheEmptying {
  /** No emptying starts after this (one under way goes on). */
  stop(): void;
  /** Resolves once no emptying is under way (at once when none is). */
  idle(): Promise<void>;
}

/**
 * Empties the embedded engine's query condition cache every `intervalSeconds` (0: never).
 *
 * The cache remembers, per part and per filter, which granules the filter matched nothing in: it
 * is what makes the upkeep's second and third lookups of a round's trace ids cheap. But each
 * statement's values (a round's trace ids and times, a dashboard's range) are new, so nearly every
 * filter is new, and each leaves an entry per part it read that no later statement asks for. The
 * engine evicts only once the entries' counted size reaches `query_condition_cache_size` (100 MiB),
 * and it counts less than they hold: 122,000 entries on small parts counted 7.4 MiB and held
 * 22.6 MiB of the allocator's memory, nearly all in blocks of up to 1 KiB. Under a soak's load the
 * all-in-one's count grew by 0.064–0.11 MiB a minute, so the cache would grow for 15 hours to a day,
 * to up to ~300 MiB, in a process whose whole RSS is about 1 GiB (docs/scaling.md, "Memory of the
 * all-in-one"). The client's connection to the embedded engine takes no server settings, so the
 * cache is emptied instead: a round of the upkeep that straddles an emptying pays its repeated
 * lookups in full once.
 *
 * On a ClickHouse server the operator's `query_condition_cache_size` caps the counted size (the
 * entries may hold about three times it), and this is not run there.
 */
export function emptyConditionCacheEvery(
  clickhouse: ClickHouseClient,
  intervalSeconds: number,
  log: { info(message: string): void; warn(message: string): void },
): ConditionCacheEmptying {
  let emptying: Promise<void> | undefined;
  if (intervalSeconds === 0) return { stop: () => {}, idle: async () => {} };
  log.info(`empties the engine's query condition cache every ${intervalSeconds} s (CLICKHOUSE_CONDITION_CACHE_DROP_SECONDS; 0: never)`);
  const empty = async () => {
    try {
      await clickhouse.command({ query: 'SYSTEM DROP QUERY CONDITION CACHE', ...namedStatement('engine.empty_condition_cache') });
    } catch (error) {
      // The next interval tries again; until one succeeds the cache grows as it would without this.
      log.warn(`emptying the engine's query condition cache failed (tried again in ${intervalSeconds} s): ${(error as Error).message}`);
    }
  };
  const timer = setInterval(() => {
    // One at a time: an emptying still waiting for the engine is enough. Cleared once settled,
    // after the assignment (a `finally` inside `empty` could run before it).
    emptying ??= empty().finally(() => {
      emptying = undefined;
    });
  }, intervalSeconds * 1000);
  // Housekeeping: it never keeps the process alive.
  timer.unref();
  return {
    stop: () => clearInterval(timer),
    idle: async () => {
      await emptying;
    },
  };
}
