/**
 * Turns our single-node DDL into its cluster form: each MergeTree table becomes a
 * `Replicated*MergeTree` table `<name>_local` created ON CLUSTER plus a `Distributed` table with
 * the original name, so queries keep their table names. Materialized views write to and read from
 * the local tables on each shard. Pure string work; the engine's parser checks the result in tests.
 */
export interface ClusterOptions {
  cluster: string;
}

// The ENGINE clause ends its line (a convention of our migration files), so its arguments may nest.
const CREATE_TABLE = /^CREATE TABLE IF NOT EXISTS (\w+)\s*\(([\s\S]*)\)\s*ENGINE\s*=\s*(\w*)MergeTree(?:\((.*)\))?[ \t]*(\n[\s\S]*)?$/;
const CREATE_MV = /^CREATE MATERIALIZED VIEW IF NOT EXISTS (\w+)\s+TO\s+(\w+)([\s\S]*)$/;
const CREATE_VIEW = /^CREATE (?:OR REPLACE )?VIEW (?:IF NOT EXISTS )?(\w+)([\s\S]*)$/;
const ALTER_TABLE = /^ALTER TABLE (\w+)\s+([\s\S]*)$/;
const DROP_TABLE = /^DROP TABLE IF EXISTS (\w+)$/;
const INSERT_SELECT = /^INSERT INTO \w+\s*(\([^)]*\))?\s*SELECT\b/;
const EXCHANGE_TABLES = /^EXCHANGE TABLES (\w+) AND (\w+)$/;

/** A `-- shard by: <expr>` comment above a CREATE TABLE picks the Distributed sharding key. */
function shardKey(comments: string[]): string {
  for (const line of comments) {
    const match = /^--\s*shard by:\s*(.+)$/.exec(line.trim());
    if (match) return match[1]!.trim();
  }
  return 'rand()';
}

export interface Statement {
  sql: string;
  comments: string[];
}

/** Splits a migration file into statements at `;` ending a line; leading comments stay attached. */
export function splitStatements(file: string): Statement[] {
  const statements: Statement[] = [];
  let comments: string[] = [];
  let body: string[] = [];
  for (const line of file.split('\n')) {
    const trimmed = line.trim();
    if (body.length === 0 && (trimmed.startsWith('--') || trimmed === '')) {
      if (trimmed) comments.push(trimmed);
      continue;
    }
    body.push(line);
    if (trimmed.endsWith(';')) {
      statements.push({ sql: body.join('\n').trim().replace(/;$/, '').trim(), comments });
      body = [];
      comments = [];
    }
  }
  if (body.join('').trim()) statements.push({ sql: body.join('\n').trim(), comments });
  return statements;
}

export function tableNames(statements: Statement[]): Set<string> {
  const names = new Set<string>();
  for (const { sql } of statements) {
    const match = CREATE_TABLE.exec(sql);
    if (match) names.add(match[1]!);
  }
  return names;
}

function localName(name: string): string {
  return `${name}_local`;
}

/** Rewrites `FROM t` / `JOIN t` for the replicated tables to their shard-local name. */
function readLocal(sql: string, tables: Set<string>): string {
  return sql.replace(/\b(FROM|JOIN)\s+(\w+)\b/gi, (whole, keyword: string, name: string) =>
    tables.has(name) ? `${keyword} ${localName(name)}` : whole,
  );
}

export function toClusterStatements(statement: Statement, tables: Set<string>, { cluster }: ClusterOptions): string[] {
  const onCluster = `ON CLUSTER ${cluster}`;
  const { sql } = statement;
  const table = CREATE_TABLE.exec(sql);
  if (table) {
    const [, name, columns, variant, args, rest = ''] = table as unknown as [
      string,
      string,
      string,
      string,
      string | undefined,
      string | undefined,
    ];
    const local = localName(name);
    const replicationArgs = [`'/clickhouse/tables/{shard}/{database}/${local}'`, `'{replica}'`, ...(args?.trim() ? [args.trim()] : [])];
    return [
      `CREATE TABLE IF NOT EXISTS ${local} ${onCluster} (${columns}) ENGINE = Replicated${variant}MergeTree(${replicationArgs.join(', ')})${rest}`,
      `CREATE TABLE IF NOT EXISTS ${name} ${onCluster} AS ${local} ENGINE = Distributed(${cluster}, currentDatabase(), ${local}, ${shardKey(statement.comments)})`,
    ];
  }
  const mv = CREATE_MV.exec(sql);
  if (mv) {
    const [, name, target, rest] = mv as unknown as [string, string, string, string];
    const to = tables.has(target) ? localName(target) : target;
    return [`CREATE MATERIALIZED VIEW IF NOT EXISTS ${name} ${onCluster} TO ${to}${readLocal(rest, tables)}`];
  }
  const alter = ALTER_TABLE.exec(sql);
  if (alter) {
    const [, name, action] = alter as unknown as [string, string, string];
    if (!tables.has(name)) return [`ALTER TABLE ${name} ${onCluster} ${action}`];
    const local = `ALTER TABLE ${localName(name)} ${onCluster} ${action}`;
    // Columns must exist on both layers; indexes, projections and TTLs live only where the data is.
    return /^\s*(ADD|DROP|MODIFY|RENAME) COLUMN/i.test(action) ? [local, `ALTER TABLE ${name} ${onCluster} ${action}`] : [local];
  }
  const drop = DROP_TABLE.exec(sql);
  if (drop) {
    const name = drop[1]!;
    const statements = [`DROP TABLE IF EXISTS ${name} ${onCluster}`];
    // SYNC: a replicated table's path in Keeper is freed at once, not minutes later, so a migration
    // may create a table of that name again (a rebuild's staging table: create, drop, create).
    return tables.has(name) ? [...statements, `DROP TABLE IF EXISTS ${localName(name)} ${onCluster} SYNC`] : statements;
  }
  const exchange = EXCHANGE_TABLES.exec(sql);
  if (exchange) {
    // The rows live in the shard-local tables: exchanging them leaves each Distributed table reading,
    // under its own name, what the other held. (Its columns stay its own: a new column is added to it
    // by an ALTER … ADD COLUMN after the exchange.)
    const [, a, b] = exchange as unknown as [string, string, string];
    const local = (name: string) => (tables.has(name) ? localName(name) : name);
    return [`EXCHANGE TABLES ${local(a)} AND ${local(b)} ${onCluster}`];
  }
  // A back-fill writes through the Distributed tables (each row to its shard) and reads all shards: run once, as it is.
  if (INSERT_SELECT.test(sql)) return [sql];
  const view = CREATE_VIEW.exec(sql);
  if (view) return [sql.replace(/^(CREATE (?:OR REPLACE )?VIEW (?:IF NOT EXISTS )?\w+)/, `$1 ${onCluster}`)];
  throw new Error(`no cluster form for statement: ${sql.slice(0, 80)}…`);
}
