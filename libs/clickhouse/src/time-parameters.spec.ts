import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';

/**
 * Every time parameter a statement binds names its zone. The text of an untimezoned
 * `{x:DateTime64(9)}` is read in the server's zone (or the session's), while the columns and
 * the times we send are UTC: a ClickHouse server set to another zone would move every bound.
 */
const ROOT = path.resolve(__dirname, '../../..');
const UNZONED_TIME_PARAMETER = /\{\w+:DateTime(?:64\(\d\))?\}/g;

function sources(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const full = path.join(dir, entry.name);
    if (entry.isDirectory()) return entry.name === 'node_modules' ? [] : sources(full);
    return entry.name.endsWith('.ts') && !/\.(int-)?spec\.ts$/.test(entry.name) ? [full] : [];
  });
}

describe('time parameters', () => {
  it('name their zone in every statement of the libraries, apps and benches', () => {
    const files = ['libs', 'apps', 'bench'].flatMap((dir) => sources(path.join(ROOT, dir)));
    expect(files.length).toBeGreaterThan(50);
    const unzoned = files.flatMap((file) =>
      [...readFileSync(file, 'utf8').matchAll(UNZONED_TIME_PARAMETER)].map((match) => `${path.relative(ROOT, file)}: ${match[0]}`),
    );
    expect(unzoned).toEqual([]);
  });

  it('finds an untimezoned one', () => {
    const sql = "toDate({from:DateTime64(9)}) AND {to:DateTime} AND {at:DateTime64(9, 'UTC')}";
    expect([...sql.matchAll(UNZONED_TIME_PARAMETER)].map((match) => match[0])).toEqual(['{from:DateTime64(9)}', '{to:DateTime}']);
  });
});
