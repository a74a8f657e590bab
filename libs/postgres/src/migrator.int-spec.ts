import { mkdtempSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { projectRoot } from '@spanforge/config';
import { freshTestDatabase } from '@spanforge/testing';
import { migratePostgres } from './migrator';

// Each test migrates its own fresh database, so "first run" really is the first.
describe('PostgreSQL migrations', () => {
  const dir = path.join(projectRoot(), 'infra', 'postgres');

  it('apply every file once and nothing on the next start', async () => {
    const db = await freshTestDatabase();
    try {
      const first = await migratePostgres(db.pool, dir);
      expect(first.applied.length).toBeGreaterThan(0);
      expect(first.alreadyApplied).toBe(0);
      const second = await migratePostgres(db.pool, dir);
      expect(second).toEqual({ applied: [], alreadyApplied: first.applied.length });
      const { rows } = await db.pool.query('SELECT count(*)::int AS n FROM schema_migrations');
      expect(rows[0].n).toBe(first.applied.length);
      const tables = await db.pool.query("SELECT table_name FROM information_schema.tables WHERE table_schema = 'public' ORDER BY 1");
      expect(tables.rows.map((r) => r.table_name)).toEqual(expect.arrayContaining(['tenants', 'projects', 'api_keys']));
    } finally {
      await db.drop();
    }
  });

  it('apply each file exactly once when several processes start together', async () => {
    const db = await freshTestDatabase();
    try {
      const results = await Promise.all([migratePostgres(db.pool, dir), migratePostgres(db.pool, dir), migratePostgres(db.pool, dir)]);
      const appliedCounts = results.map((r) => r.applied.length).sort();
      const files = results.reduce((n, r) => Math.max(n, r.applied.length + r.alreadyApplied), 0);
      expect(appliedCounts).toEqual([0, 0, files]);
    } finally {
      await db.drop();
    }
  });

  it('refuse a migration edited after it was applied', async () => {
    const db = await freshTestDatabase();
    const own = mkdtempSync(path.join(os.tmpdir(), 'pg-migrations-'));
    try {
      writeFileSync(path.join(own, '001_widgets.sql'), 'CREATE TABLE IF NOT EXISTS widgets (id int);');
      await migratePostgres(db.pool, own);
      writeFileSync(path.join(own, '001_widgets.sql'), 'CREATE TABLE IF NOT EXISTS widgets (id bigint);');
      await expect(migratePostgres(db.pool, own)).rejects.toThrow(/001_widgets changed after it was applied/);
    } finally {
      await db.drop();
    }
  });

  it('roll back a failing migration and record nothing', async () => {
    const db = await freshTestDatabase();
    const own = mkdtempSync(path.join(os.tmpdir(), 'pg-migrations-'));
    try {
      writeFileSync(path.join(own, '001_ok.sql'), 'CREATE TABLE IF NOT EXISTS ok_table (id int);');
      writeFileSync(path.join(own, '002_broken.sql'), 'CREATE TABLE half (id int); SELECT no_such_function();');
      await expect(migratePostgres(db.pool, own)).rejects.toThrow(/002_broken failed/);
      const { rows } = await db.pool.query('SELECT version FROM schema_migrations ORDER BY 1');
      expect(rows.map((r) => r.version)).toEqual([1]);
      const half = await db.pool.query("SELECT to_regclass('half') AS t");
      expect(half.rows[0].t).toBeNull();
    } finally {
      await db.drop();
    }
  });

  it('still say why a migration failed when its connection died with it, and leave no lock behind', async () => {
    const db = await freshTestDatabase();
    const own = mkdtempSync(path.join(os.tmpdir(), 'pg-migrations-'));
    const warnings: string[] = [];
    const log = { warn: (m: string) => warnings.push(m), error: (m: string) => warnings.push(m) };
    try {
      writeFileSync(path.join(own, '001_ok.sql'), 'CREATE TABLE IF NOT EXISTS ok_table (id int);');
      // The session ends under the migration: its ROLLBACK and the unlock cannot run on it any more.
      writeFileSync(path.join(own, '002_dies.sql'), 'SELECT pg_terminate_backend(pg_backend_pid());');
      await expect(migratePostgres(db.pool, own, log)).rejects.toThrow(
        /^PostgreSQL migration 002_dies failed: terminating connection due to administrator command/,
      );
      // Said, not thrown at the process: the connection's own 'error' event, and the ROLLBACK that could not run.
      expect(warnings.sort()).toEqual([
        expect.stringMatching(/^PostgreSQL migration 002_dies: ROLLBACK failed too \(.+\); closing that connection$/),
        expect.stringMatching(/^PostgreSQL migrations: the PostgreSQL connection failed while in use \(.+\); it is closed, not reused$/),
      ]);
      // The dead connection went back to no one, and its lock went with it: the next run is not blocked.
      writeFileSync(path.join(own, '002_dies.sql'), 'SELECT 1;');
      const next = await Promise.race([
        migratePostgres(db.pool, own, log),
        new Promise((_, reject) => setTimeout(() => reject(new Error('blocked on the migration lock')), 5_000)),
      ]);
      expect(next).toEqual({ applied: ['002_dies'], alreadyApplied: 1 });
    } finally {
      await db.drop();
    }
  });
});
