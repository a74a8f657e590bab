import type { Pool } from 'pg';
import { reasonOf, stderrLog, type ErrorLog } from './error-log';
import { checkOut } from './pool';

/**
 * Runs `work` while holding a PostgreSQL session advisory lock, so processes that call it with the
 * same `lock` at once take turns. The lock belongs to one pooled connection for the duration; if
 * releasing it fails, that connection is closed instead of pooled, which releases it just the same.
 */
export async function withAdvisoryLock<T>(
  pool: Pool,
  lock: number,
  what: string,
  work: () => Promise<T>,
  log: ErrorLog = stderrLog('postgres'),
): Promise<T> {
  const held = await checkOut(pool, log, what);
  let broken: Error | undefined;
  try {
    await held.client.query('SELECT pg_advisory_lock($1)', [lock]);
    return await work();
  } finally {
    broken = held.failure();
    if (!broken) {
      await held.client.query('SELECT pg_advisory_unlock($1)', [lock]).catch((unlockError: unknown) => {
        broken = unlockError instanceof Error ? unlockError : new Error(String(unlockError));
        log.warn(`${what}: releasing the advisory lock failed (${reasonOf(unlockError)}); closing that connection, which releases it`);
      });
    }
    held.release(broken);
  }
}
