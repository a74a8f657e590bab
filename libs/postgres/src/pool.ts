import { Pool } from 'pg';

/** One pool per process; statement_timeout keeps a stuck query from holding a request forever. */
export function createPostgresPool(url: string, max = 10): Pool {
  const pool = new Pool({ connectionString: url, max, statement_timeout: 30_000, application_name: 'spanforge' });
  // An idle client losing its server emits on the pool; without a listener that would crash the process.
  pool.on('error', () => undefined);
  return pool;
}
