import { createHash } from 'node:crypto';
import { readFile, readdir } from 'node:fs/promises';
import path from 'node:path';
import type { ClickHouseClient } from '@clickhouse/client';
import { splitStatements } from './cluster-ddl';

export interface ClickHouseMigration {
  version: number;
  name: string;
  statements: string[];
  checksum: string;
}

export async function readClickHouseMigrations(dir: string): Promise<ClickHouseMigration[]> {
  const files = (await readdir(dir)).filter((f) => f.endsWith('.sql')).sort();
  const migrations: ClickHouseMigration[] = [];
  for (const file of files) {
    const match = /^(\d+)_([\w-]+)\.sql$/.exec(file);
    if (!match) throw new Error(`migration file ${file} in ${dir} is not named NNN_name.sql`);
    const text = await readFile(path.join(dir, file), 'utf8');
    const version = Number(match[1]);
    if (migrations.some((m) => m.version === version)) throw new Error(`two migrations numbered ${version} in ${dir}`);
    migrations.push({
      version,
      name: file.replace(/\.sql$/, ''),
      statements: splitStatements(text).map((s) => executable(s.sql)),
      checksum: createHash('sha256').update(text).digest('hex'),
    });
  }
  return migrations;
}

/**
 * A migration statement as it is run. A back-fill (INSERT … SELECT over a whole table) may write
 * into more than the 100 partitions one insert may touch by default: a project with spans from
 * many months would otherwise stop every later start at that migration.
 */
function executable(sql: string): string {
  return /^\s*INSERT\b/i.test(sql.replace(/^\s*(--[^\n]*\n\s*)*/, '')) && !/\bSETTINGS\b/i.test(sql)
    ? `${sql}\nSETTINGS max_partitions_per_insert_block = 0`
    : sql;
}

/**
 * Migrations whose text was changed after some data directory had applied it: the checksum of what
 * those directories ran is accepted too, and a later migration brings them in line. Never a way to
 * edit an applied migration; a change is a new migration.
 */
const LANDED_CHECKSUMS: Record<string, readonly string[]> = {
  // 008 as landed in 5d9240b (one row per day a trace spans); 009 replaces its view.
  '008_trace_cost_days': ['01af9055ab3888afccba83bd9657b758ffea13f6694fe391af5ef90239b783fd'],
  // 028 with its comment's figures corrected in c843913, restored to its first text: the same statement.
  '028_spans_vertical_merges': ['28a1887a711cde440632e4f44a555cf6deee3517a49cd2caa743917a9b77bfcb'],
};

export interface ClickHouseMigrationResult {
  applied: string[];
  alreadyApplied: number;
}

/**
 * Applies pending migrations statement by statement and records each in `schema_migrations`.
 * Every statement is idempotent DDL (IF NOT EXISTS), so a migration interrupted half way converges
 * when run again. Two processes must not run it at once on one server (their statements would
 * interleave: 013's exchange could be undone): ClickHouseModule holds a PostgreSQL advisory lock.
 */
export async function migrateClickHouse(client: ClickHouseClient, dir: string): Promise<ClickHouseMigrationResult> {
  await client.command({
    query: `CREATE TABLE IF NOT EXISTS schema_migrations (
      version UInt32, name String, checksum String, applied_at DateTime64(3, 'UTC') DEFAULT now64(3)
    ) ENGINE = ReplacingMergeTree ORDER BY version`,
  });
  const recordedRows = await client.query({
    query: 'SELECT version, any(checksum) AS checksum FROM schema_migrations GROUP BY version',
    format: 'JSONEachRow',
  });
  const recorded = new Map((await recordedRows.json<{ version: number; checksum: string }>()).map((r) => [Number(r.version), r.checksum]));
  const applied: string[] = [];
  const migrations = await readClickHouseMigrations(dir);
  for (const migration of migrations) {
    const checksum = recorded.get(migration.version);
    if (checksum !== undefined) {
      if (checksum !== migration.checksum && !LANDED_CHECKSUMS[migration.name]?.includes(checksum)) {
        throw new Error(`ClickHouse migration ${migration.name} changed after it was applied; add a new migration instead`);
      }
      continue;
    }
    for (const statement of migration.statements) {
      try {
        await client.command({ query: statement });
      } catch (error) {
        throw new Error(`ClickHouse migration ${migration.name} failed at "${statement.slice(0, 60)}…": ${(error as Error).message}`);
      }
    }
    await client.insert({
      table: 'schema_migrations',
      values: [{ version: migration.version, name: migration.name, checksum: migration.checksum }],
      format: 'JSONEachRow',
    });
    applied.push(`${migration.name}`);
  }
  return { applied, alreadyApplied: migrations.length - applied.length };
}
