import { execFile } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { ROOT } from './processes';

const run = promisify(execFile);

/**
 * A module as built in dist/ (`parts` from dist/ on), for a script run in a process of its own
 * (inProcessOfItsOwn). Throws, saying how to build it, when it is missing.
 */
export function builtModule(...parts: string[]): string {
  const file = path.join(ROOT, 'dist', ...parts);
  if (!existsSync(file)) throw new Error(`${file} is missing: run \`npm run build\` first (npm test does)`);
  return file;
}

/** A module of libs/ as built in dist/ (builtModule). */
export function builtLib(...parts: string[]): string {
  return builtModule('libs', ...parts);
}

/**
 * Runs `script` with node in a process of its own (`args` are its `process.argv[1]`…): the embedded
 * engine takes its arguments when it starts, and its allocator its options when libchdb is loaded,
 * while this test process's engine was started by the suites run before. `env` replaces the
 * environment when given. Answers the script's stdout and stderr.
 */
export async function inProcessOfItsOwn(
  script: string,
  args: unknown[],
  env?: NodeJS.ProcessEnv,
): Promise<{ stdout: string; stderr: string }> {
  return run(process.execPath, ['-e', script, ...args.map(String)], { cwd: ROOT, ...(env && { env }) });
}

/**
 * A temporary directory for the test file's engines, made before its tests and removed after them.
 * Returns a function answering its path (only set once the tests run).
 */
export function temporaryRootForFile(prefix: string): () => string {
  let root: string | undefined;
  beforeAll(() => {
    root = mkdtempSync(path.join(os.tmpdir(), prefix));
  });
  afterAll(() => {
    if (root) rmSync(root, { recursive: true, force: true });
  });
  return () => {
    if (root === undefined) throw new Error(`the temporary directory ${prefix}… is made before the tests, not when the file loads`);
    return root;
  };
}
