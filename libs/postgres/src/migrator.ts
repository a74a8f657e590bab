import { createHash } from 'node:crypto';
import { readFile, readdir } from 'node:fs/promises';
import path from 'node:path';
import type { Pool } from 'pg';
import { reasonOf, stderrLog, type ErrorLog } from './error-log';
import { checkOut } from './pool';

export interface Migration {
  version: number;
  /** The file name without `.sql`, e.g. `001_tenancy`. */
  name: string;
  sql: string;
  checksum: string;
}

/** Reads `NNN_name.sql` files in version order; two files with one number is an error. */
export async function readMigrations(dir: string): Promise<Migration[]> {
  const files = (await readdir(dir)).filter((f) => f.endsWith('.sql')).sort();
  const migrations: Migration[] = [];
  for (const file of files) {
    const match = /^(\d+)_([\w-]+)\.sql$/.exec(file);
    if (!match) throw new Error(`migration file ${file} in ${dir} is not named NNN_name.sql`);
    const sql = await readFile(path.join(dir, file), 'utf8');
    const version = Number(match[1]);
    if (migrations.some((m) => m.version === version)) throw new Error(`two migrations numbered ${version} in ${dir}`);
    migrations.push({ version, name: file.replace(/\.sql$/, ''), sql, checksum: createHash('sha256').update(sql).digest('hex') });
  }
  return migrations;
}

/** Arbitrary constant: the advisory lock every process takes while migrating PostgreSQL. */
const MIGRATION_LOCK = 7_304_211_902;

export interface MigrationResult {
  applied: string[];
  alreadyApplied: number;
}

/**
 * Applies pending migrations, each in its own transaction, under a session advisory lock so
 * that several processes starting at once apply each file exactly once. A file edited after it
 * was applied stops the start: migrations are never edited after landing.
 */
export async function migratePostgres(pool: Pool, dir: string, log: ErrorLog = stderrLog('postgres')): Promise<MigrationResult> {
  const migrations = await readMigrations(dir);
  const held = await checkOut(pool, log, 'PostgreSQL migrations');
  const client = held.client;
  /** Set when the session may still hold the lock or an open transaction: the connection is then closed, not pooled. */
  let broken: Error | undefined;
  try {
    await client.query('SELECT pg_advisory_lock($1)', [MIGRATION_LOCK]);
    await client.query(`CREATE TABLE IF NOT EXISTS schema_migrations (
      version integer PRIMARY KEY,
      name text NOT NULL,
      checksum text NOT NULL,
      applied_at timestamptz NOT NULL DEFAULT now())`);
    const { rows } = await client.query<{ version: number; checksum: string }>('SELECT version, checksum FROM schema_migrations');
    const recorded = new Map(rows.map((r) => [r.version, r.checksum]));
    const applied: string[] = [];
    for (const migration of migrations) {
      const checksum = recorded.get(migration.version);
      if (checksum !== undefined) {
        if (checksum !== migration.checksum) {
          throw new Error(`PostgreSQL migration ${migration.name} changed after it was applied; add a new migration instead`);
        }
        continue;
      }
      await client.query('BEGIN');
      try {
        await client.query(migration.sql);
        await client.query('INSERT INTO schema_migrations (version, name, checksum) VALUES ($1, $2, $3)', [
          migration.version,
          migration.name,
          migration.checksum,
        ]);
        await client.query('COMMIT');
      } catch (error) {
        // A ROLLBACK that fails too (the connection is gone) must not hide why the migration failed;
        // PostgreSQL aborts the transaction of a lost session by itself, and the session is discarded below.
        await client.query('ROLLBACK').catch((rollbackError: unknown) => {
          broken = rollbackError instanceof Error ? rollbackError : new Error(String(rollbackError));
          log.warn(`PostgreSQL migration ${migration.name}: ROLLBACK failed too (${reasonOf(rollbackError)}); closing that connection`);
        });
        throw new Error(`PostgreSQL migration ${migration.name} failed: ${(error as Error).message}`);
      }
      applied.push(`${migration.name}`);
    }
    return { applied, alreadyApplied: migrations.length - applied.length };
  } finally {
    broken ??= held.failure();
    if (!broken) {
      // The lock belongs to the session: if unlocking fails, the session is ended instead (release
      // with an error closes the connection), which frees the lock just the same. Never pool it as
      // it is, or the next migrator would wait on a lock that nobody releases.
      await client.query('SELECT pg_advisory_unlock($1)', [MIGRATION_LOCK]).catch((unlockError: unknown) => {
        broken = unlockError instanceof Error ? unlockError : new Error(String(unlockError));
        log.warn(
          `PostgreSQL migrations: releasing the advisory lock failed (${reasonOf(unlockError)}); closing that connection, which releases it`,
        );
      });
    }
    held.release(broken);
  }
}
