// Landed migrations are never edited: a data directory that applied one would differ from a fresh
// one. infra/migrations.sha256 records the SHA-256 of every migration file as it landed; this
// check (part of `npm test`) fails when a recorded file changed or disappeared, or when a new file
// is not recorded yet (it prints the line to add, so adding a migration is one deliberate step).
import { createHash } from 'node:crypto';
import { readFileSync, readdirSync, existsSync } from 'node:fs';
import path from 'node:path';

const root = path.resolve(import.meta.dirname, '..');
const lockFile = path.join(root, 'infra', 'migrations.sha256');
const dirs = ['infra/postgres', 'infra/clickhouse'];

const recorded = new Map();
for (const line of readFileSync(lockFile, 'utf8').split('\n')) {
  if (!line.trim() || line.startsWith('#')) continue;
  const [hash, file] = line.trim().split(/\s+/);
  recorded.set(file, hash);
}

const problems = [];
const present = new Set();
for (const dir of dirs) {
  for (const name of readdirSync(path.join(root, dir))
    .filter((f) => f.endsWith('.sql'))
    .sort()) {
    const file = `${dir}/${name}`;
    present.add(file);
    const hash = createHash('sha256')
      .update(readFileSync(path.join(root, file)))
      .digest('hex');
    const landed = recorded.get(file);
    if (landed === undefined)
      problems.push(`${file} is not recorded in infra/migrations.sha256; if it is a new migration, add the line:\n  ${hash}  ${file}`);
    else if (landed !== hash)
      problems.push(
        `${file} differs from the migration that landed: landed migrations are never edited (a directory that applied it would differ from a fresh one); put the change in a new migration, numbered after the last`,
      );
  }
}
for (const file of recorded.keys()) {
  if (!present.has(file) && !existsSync(path.join(root, file)))
    problems.push(`${file} landed and is gone: landed migrations are never removed`);
}
if (problems.length > 0) {
  process.stderr.write(`check-migrations: ${problems.length} problem(s)\n- ${problems.join('\n- ')}\n`);
  process.exit(1);
}
process.stdout.write(`check-migrations: ${present.size} migrations as they landed\n`);
