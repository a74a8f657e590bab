// Compiles apps/ and libs/ to dist/ with SWC (type checking is `npm run typecheck`).
// Incremental by mtime so `npm start` after the first build costs well under a second.
// Path aliases (@spanforge/*) are rewritten to relative requires by SWC's `jsc.paths`,
// which needs an absolute baseUrl — hence this script rather than a static .swcrc.
import { transformFile } from '@swc/core';
import { mkdir, readdir, stat, writeFile, rm } from 'node:fs/promises';
import { readFileSync } from 'node:fs';
import path from 'node:path';

const root = path.resolve(import.meta.dirname, '..');
const outDir = path.join(root, 'dist');
// test/support: the test-only chDB HTTP endpoint runs as a process of its own (chdb-http-server.main.ts).
const sourceDirs = ['apps', 'libs', 'bench', 'test/support'];
const { compilerOptions } = JSON.parse(readFileSync(path.join(root, 'tsconfig.base.json'), 'utf8'));

const swcOptions = {
  jsc: {
    parser: { syntax: 'typescript', decorators: true },
    transform: { legacyDecorator: true, decoratorMetadata: true },
    target: 'es2023',
    baseUrl: root,
    paths: compilerOptions.paths,
    keepClassNames: true,
  },
  module: { type: 'commonjs', strictMode: true },
  sourceMaps: true,
};

// Every file under dir, recursively (none when dir does not exist).
async function* files(dir) {
  let entries;
  try {
    entries = await readdir(dir, { withFileTypes: true });
  } catch (error) {
    if (error.code === 'ENOENT') return;
    throw error;
  }
  for (const entry of entries) {
    const full = path.join(dir, entry.name);
    if (entry.isDirectory()) yield* files(full);
    else yield full;
  }
}

// The TypeScript sources under dir that the build compiles (not tests or declarations).
async function* sources(dir) {
  for await (const file of files(dir)) if (file.endsWith('.ts') && !/\.(spec|int-spec|d)\.ts$/.test(file)) yield file;
}

async function mtime(file) {
  try {
    return (await stat(file)).mtimeMs;
  } catch {
    return -1;
  }
}

const started = Date.now();
if (process.argv.includes('--clean')) await rm(outDir, { recursive: true, force: true });
let compiled = 0;
let total = 0;
// What this build writes: dist/ holds only this build's output, and any other file in it (a
// compiled file whose source was renamed or deleted, or anything put there by hand) is removed, so
// that nothing runs or is required from dist/ that the sources no longer have.
const targets = new Set();
for (const dir of sourceDirs) {
  for await (const file of sources(path.join(root, dir))) {
    total++;
    const rel = path.relative(root, file);
    const target = path.join(outDir, rel.replace(/\.ts$/, '.js'));
    targets.add(target);
    if ((await mtime(target)) >= (await mtime(file))) continue;
    const { code, map } = await transformFile(file, {
      ...swcOptions,
      filename: file,
      sourceFileName: path.relative(path.dirname(target), file),
    });
    await mkdir(path.dirname(target), { recursive: true });
    await writeFile(target, `${code}\n//# sourceMappingURL=${path.basename(target)}.map\n`);
    if (map) await writeFile(`${target}.map`, map);
    compiled++;
  }
}
let removed = 0;
for await (const file of files(outDir)) {
  if (targets.has(file.replace(/\.map$/, ''))) continue;
  // force: another build running at once may have removed it first.
  await rm(file, { force: true });
  removed++;
}
if (!process.argv.includes('--quiet') || compiled > 0 || removed > 0) {
  const stale = removed > 0 ? `, ${removed} files of removed sources taken out` : '';
  console.error(`build: ${compiled} of ${total} files compiled to dist/ in ${Date.now() - started} ms${stale}`);
}
