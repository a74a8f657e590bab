import { existsSync } from 'node:fs';
import path from 'node:path';

let cachedRoot: string | undefined;

/** The repository root (where infra/ lives), found from this file in src/ or in dist/. */
export function projectRoot(): string {
  if (cachedRoot) return cachedRoot;
  let dir = __dirname;
  while (!existsSync(path.join(dir, 'infra')) || !existsSync(path.join(dir, 'package.json'))) {
    const parent = path.dirname(dir);
    if (parent === dir) throw new Error(`cannot find the project root (with infra/) above ${__dirname}`);
    dir = parent;
  }
  cachedRoot = dir;
  return dir;
}
