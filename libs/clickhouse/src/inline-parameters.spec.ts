import { MAX_INLINED_BYTES, inlineParameters, withInlinedParameters } from './inline-parameters';

describe('inlineParameters', () => {
  it('writes each placeholder as a literal of its declared type', () => {
    expect(
      inlineParameters('SELECT * FROM t WHERE a = {a:String} AND b IN {b:Array(Int64)} LIMIT {n: UInt32}', {
        a: 'x',
        b: [1, '2', 3n],
        n: 10,
      }),
    ).toBe("SELECT * FROM t WHERE a = 'x' AND b IN CAST([1,2,3] AS Array(Int64)) LIMIT CAST(10 AS UInt32)");
    expect(inlineParameters("SELECT {t:DateTime64(9, 'UTC')}, {d:Array(Date)}", { t: '1733000000.123456789', d: ['2026-12-01'] })).toBe(
      "SELECT CAST('1733000000.123456789' AS DateTime64(9, 'UTC')), CAST(['2026-12-01'] AS Array(Date))",
    );
  });

  it('escapes what could end a string or its line: quotes, backslashes, NUL, line breaks', () => {
    expect(inlineParameters('SELECT {s:String}', { s: "a' OR 1=1 --" })).toBe(String.raw`SELECT 'a'' OR 1=1 --'`);
    expect(inlineParameters('SELECT {s:String}', { s: String.raw`\'; DROP TABLE spans` })).toBe(
      String.raw`SELECT '\\''; DROP TABLE spans'`,
    );
    expect(inlineParameters('SELECT {s:String}', { s: 'a\0b\nc\rd' })).toBe(String.raw`SELECT 'a\0b\nc\rd'`);
  });

  it('looks for placeholders outside strings, quoted names and comments, and stays bound where it cannot tell them apart', () => {
    const query = String.raw`SELECT 'it''s', "a'b", ${'`'}c'd${'`'} /* it's */ FROM t WHERE x = {a:String} AND y = 'it\'s'` + " -- it's\n";
    expect(inlineParameters(query, { a: 'v' })).toBe(query.replace('{a:String}', "'v'"));
    // Placeholder-like text where the parser would not substitute it: the scan skips it, the count of
    // `{name:` in the text then disagrees with what was written in, and the statement stays bound.
    for (const text of ["SELECT '{a:String}', {a:String}", 'SELECT {a:String} -- {a:String}', 'SELECT /* {a:String} */ {a:String}'])
      expect([text, inlineParameters(text, { a: 'v' })]).toEqual([text, undefined]);
    // Forms the scan does not follow: # comments, heredocs, nested block comments.
    for (const text of ["SELECT {a:String} # it's", "SELECT $$it's$$, {a:String}", "SELECT /* /* it's */ */ {a:String}"])
      expect([text, inlineParameters(text, { a: 'v' })]).toEqual([text, undefined]);
  });

  it('stays bound when the values written in would make the statement longer than ClickHouse parses', () => {
    const ids = Array.from({ length: 10_000 }, (_, i) => `trace-${String(i).padStart(26, '0')}`);
    const query = 'SELECT count() FROM t WHERE id IN {ids:Array(String)}';
    expect(inlineParameters(query, { ids })).toBeUndefined();
    expect(inlineParameters(query, { ids: ids.slice(0, 1_000) })!.length).toBeLessThan(MAX_INLINED_BYTES);
  });

  it('writes nothing in when a type or a value is not one it checks: the statement stays bound', () => {
    const none = [
      ['SELECT {a:Identifier}', { a: 'spans' }],
      ['SELECT {a:Map(String, String)}', { a: { k: 'v' } }],
      ['SELECT {a:Nullable(String)}', { a: 'v' }],
      ['SELECT {a:String}', { a: 5 }],
      ['SELECT {a:String}', {}],
      ['SELECT {a:UInt32}', { a: -1 }],
      ['SELECT {a:UInt8}', { a: 256 }],
      ['SELECT {a:Int64}', { a: 1.5 }],
      ['SELECT {a:Int64}', { a: '1 OR 1' }],
      ['SELECT {a:Int64}', { a: '9223372036854775808' }],
      ['SELECT {a:Float64}', { a: Number.NaN }],
      ['SELECT {a:Float64}', { a: '1); DROP TABLE spans' }],
      ['SELECT {a:Date}', { a: "2026-12-01' OR '1" }],
      ['SELECT {a:DateTime64(9)}', { a: new Date(0) }],
      ['SELECT {a:Array(String)}', { a: ['x', 1] }],
      ['SELECT {a:Array(String)}', { a: 'x' }],
    ] as const;
    for (const [query, params] of none) expect([query, inlineParameters(query, params)]).toEqual([query, undefined]);
  });

  it('hands the call on without its parameters once written in, and as it was otherwise', () => {
    const call = { query: 'SELECT {a:String}', query_params: { a: 'x' }, format: 'JSONEachRow' };
    expect(withInlinedParameters(call)).toEqual({ query: "SELECT 'x'", query_params: undefined, format: 'JSONEachRow' });
    const kept = { query: 'SELECT {a:Identifier}', query_params: { a: 'x' } };
    expect(withInlinedParameters(kept)).toBe(kept);
    const plain = { query: 'SELECT 1' };
    expect(withInlinedParameters(plain)).toBe(plain);
  });
});
