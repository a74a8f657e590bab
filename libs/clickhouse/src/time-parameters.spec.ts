import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { PLACEHOLDER_PATTERN } from './inline-parameters';

/**
 * Every time parameter a statement binds names its zone. The text of an untimezoned
 * `{x:DateTime64(9)}` is read in the server's zone (or the session's), while the columns and
 * the times we send are UTC: a ClickHouse server set to another zone would move every bound.
 */
const ROOT = path.resolve(__dirname, '../../..');
/** A time type, bare or inside Array/Nullable/LowCardinality. */
const TIME_TYPE = /^(?:(?:Array|Nullable|LowCardinality)\(\s*)*DateTime(?:32|64)?\b/;

/** The placeholders of `text` whose type is a time type with no zone named. */
function unzonedTimeParameters(text: string): string[] {
  return [...text.matchAll(new RegExp(PLACEHOLDER_PATTERN, 'g'))]
    .filter((match) => TIME_TYPE.test(match[2]!) && !match[2]!.includes("'"))
    .map((match) => match[0]);
}

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
      unzonedTimeParameters(readFileSync(file, 'utf8')).map((placeholder) => `${path.relative(ROOT, file)}: ${placeholder}`),
    );
    expect(unzoned).toEqual([]);
  });

  it('finds the untimezoned ones, in every form a placeholder can take', () => {
    const sql = [
      "toDate({from:DateTime64(9)}) AND {to:DateTime} AND {at:DateTime64(9, 'UTC')}",
      "{ a : DateTime64( 3 ) } {b:Array(DateTime64(9))} {c:Nullable(DateTime)} {d:DateTime32} {e:Array(DateTime('UTC'))}",
      '{ kind: "embedded" } {n:UInt32} {s:String}',
    ].join(' ');
    expect(unzonedTimeParameters(sql)).toEqual([
      '{from:DateTime64(9)}',
      '{to:DateTime}',
      '{ a : DateTime64( 3 ) }',
      '{b:Array(DateTime64(9))}',
      '{c:Nullable(DateTime)}',
      '{d:DateTime32}',
    ]);
  });
});
