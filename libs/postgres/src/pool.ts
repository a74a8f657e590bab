import { Pool, type PoolClient } from 'pg';
import { ThrottledWarning, reasonOf, stderrLog, type ErrorLog } from './error-log';

export * from './error-log';

/** One pool per process; statement_timeout keeps a stuck query from holding a request forever. */
export function createPostgresPool(url: string, max = 10, log: ErrorLog = stderrLog('postgres')): Pool {
  const pool = new Pool({ connectionString: url, max, statement_timeout: 30_000, application_name: 'spanforge' });
  // An idle client losing its server (a restart, a failover, an idle timeout on the way) emits on the
  // pool; the pool drops that client and the next query opens a new one. Without a listener the event
  // would crash the process; it is said, at most once per 10 s, because it explains the failures of
  // the queries that follow while PostgreSQL is away.
  const idleLost = new ThrottledWarning(log);
  pool.on('error', (error) => idleLost.warn(`PostgreSQL pool: an idle connection failed and was dropped: ${reasonOf(error)}`));
  return pool;
}

/** A client taken from the pool, guarded against its connection failing while it is held. */
export interface CheckedOutClient {
  client: PoolClient;
  /** The connection's failure while held ('error' event), if any: the client must not go back to the pool then. */
  failure(): Error | undefined;
  /** Back to the pool, or closed when `error` is given or the connection failed while held. */
  release(error?: Error): void;
}

/**
 * `pool.connect()` for work that holds a client (a transaction, a session lock). While a client is
 * held the pool does not listen to it, and a connection that dies between queries (a restart, a
 * terminated backend) emits 'error': unheard, that would crash the process. Here it is said, with
 * its reason, and remembered so that the client is closed instead of pooled again.
 */
export async function checkOut(pool: Pool, log: ErrorLog, what: string): Promise<CheckedOutClient> {
  const client = await pool.connect();
  let failure: Error | undefined;
  const onError = (error: Error) => {
    if (failure) return;
    failure = error;
    log.warn(`${what}: the PostgreSQL connection failed while in use (${reasonOf(error)}); it is closed, not reused`);
  };
  client.on('error', onError);
  return {
    client,
    failure: () => failure,
    release: (error) => {
      client.off('error', onError);
      client.release(error ?? failure);
    },
  };
}
