import { projectRoot } from '@spanforge/config';
import path from 'node:path';
import { splitStatements, tableNames, toClusterStatements } from './cluster-ddl';
import { readFileSync, readdirSync } from 'node:fs';

/**
 * `npm run migrations:print [-- --cluster NAME]`: prints every ClickHouse migration, as applied by
 * the single-node engine or in its cluster form (ReplicatedMergeTree + Distributed, ON CLUSTER).
 */
export function renderMigrations(dir: string, cluster: string | undefined): string {
  const files = readdirSync(dir)
    .filter((f) => f.endsWith('.sql'))
    .sort();
  const all = files.map((file) => ({ file, statements: splitStatements(readFileSync(path.join(dir, file), 'utf8')) }));
  const tables = tableNames(all.flatMap((f) => f.statements));
  const out: string[] = [];
  for (const { file, statements } of all) {
    out.push(`-- ${file}${cluster ? ` (cluster ${cluster})` : ''}`);
    for (const statement of statements) {
      const sqls = cluster ? toClusterStatements(statement, tables, { cluster }) : [statement.sql];
      for (const sql of sqls) out.push(`${sql};`, '');
    }
  }
  return out.join('\n');
}

function main(argv: string[]): void {
  const at = argv.indexOf('--cluster');
  const cluster = at >= 0 ? argv[at + 1] : undefined;
  if (at >= 0 && (!cluster || !/^[A-Za-z_][\w-]*$/.test(cluster))) {
    process.stderr.write('usage: npm run migrations:print -- [--cluster NAME]   (NAME: letters, digits, _ or -)\n');
    process.exitCode = 2;
    return;
  }
  process.stdout.write(renderMigrations(path.join(projectRoot(), 'infra', 'clickhouse'), cluster));
}

if (require.main === module) main(process.argv.slice(2));
