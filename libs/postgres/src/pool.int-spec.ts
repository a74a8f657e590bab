import { Client } from 'pg';
import { testDatabaseUrl } from '@spanforge/testing';
import { createPostgresPool } from './pool';

describe('PostgreSQL pool', () => {
  it('says why an idle connection failed, drops it and serves the next query on a new one', async () => {
    const warnings: string[] = [];
    const pool = createPostgresPool(testDatabaseUrl(), 2, { warn: (m) => warnings.push(m), error: (m) => warnings.push(m) });
    try {
      const client = await pool.connect();
      const { rows } = await client.query<{ pid: number }>('SELECT pg_backend_pid() AS pid');
      client.release();
      const admin = new Client({ connectionString: testDatabaseUrl() });
      await admin.connect();
      await admin.query('SELECT pg_terminate_backend($1)', [rows[0]!.pid]);
      await admin.end();
      for (let i = 0; i < 100 && warnings.length === 0; i++) await new Promise((resolve) => setTimeout(resolve, 20));
      expect(warnings).toEqual([
        expect.stringMatching(
          /^PostgreSQL pool: an idle connection failed and was dropped: terminating connection due to administrator command/,
        ),
      ]);
      const { rows: after } = await pool.query<{ pid: number }>('SELECT pg_backend_pid() AS pid');
      expect(after[0]!.pid).not.toBe(rows[0]!.pid);
    } finally {
      await pool.end();
    }
  });
});
