import path from 'node:path';
import { workerDataDir } from '@spanforge/testing';
import { inlineParameters } from './inline-parameters';

jest.setTimeout(60_000);

/**
 * The values written into a statement are the values chDB would have bound: for every type written
 * in and values chosen to break a careless quoting, the same SELECT run bound (chDB's own binding)
 * and with the values written in answers the same values of the same types.
 */
describe('parameters written into the statement (embedded chDB)', () => {
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  const { Session } = require('chdb') as { Session: new (path: string) => ChdbSession };
  interface ChdbSession {
    query(sql: string, format: string): string;
    queryBind(sql: string, params: Record<string, unknown>, format: string): string;
    close(): void;
  }
  let session: ChdbSession;
  beforeAll(() => {
    session = new Session(path.join(workerDataDir(), 'clickhouse'));
  });
  // An open session keeps the engine's background work going in this worker after the suite.
  afterAll(() => session?.close());

  const strings = [
    '',
    'plain',
    "it's",
    "a' OR '1'='1",
    "\\'; DROP TABLE spans; --",
    'back\\slash \\n \\t \\0 \\x41',
    'tab\tnew\nline\r',
    'nul\0byte',
    '{other:String} and {x:UInt32}',
    'ünïcødé 漢字 🙂',
    '"double" `back`',
    '/* comment */ -- line',
  ];
  const cases: Array<[string, unknown]> = [
    ...strings.map((s): [string, unknown] => ['String', s]),
    ['Array(String)', strings],
    ['Array(String)', []],
    ['Int64', 0],
    ['Int64', -9_007_199_254_740_991],
    ['Int64', '-9223372036854775808'],
    ['Int64', 9_223_372_036_854_775_807n],
    ['UInt64', '18446744073709551615'],
    ['UInt32', 4_294_967_295],
    ['UInt8', 255],
    ['Int32', -2_147_483_648],
    ['Array(Int64)', [1, -2, 4n]],
    ['Float64', 0.1],
    ['Float64', -3.5],
    ['Float64', 1e-7],
    ['Float64', 1.5e-300],
    ['Float64', 123456.789],
    ['Float64', '2.5e-3'],
    ['Date', '2026-12-01'],
    ['Array(Date)', ['2026-12-01', '1970-01-01']],
    ["DateTime64(9, 'UTC')", '1733000000.123456789'],
    ["DateTime64(9, 'UTC')", '2026-12-01 10:20:30.123456789'],
    ['DateTime64(9)', '2026-12-01 10:20:30'],
    ["DateTime64(6, 'UTC')", '1733000000'],
    // Out of range or finer than the type: whatever the binding makes of them, written in gives the same.
    ['Date', '2026-02-30'],
    ['Date', '1969-12-31'],
    ['Date', '2150-01-01'],
    ["DateTime64(3, 'UTC')", '2026-12-01 10:20:30.123456789'],
    ["DateTime64(3, 'UTC')", '1733000000.987654321'],
  ];

  it.each(cases)('%s %p: the same value written in as bound', (type, value) => {
    const query = `SELECT {p:${type}} AS v, toTypeName(v) AS type FORMAT JSONEachRow`;
    const inlined = inlineParameters(query, { p: value });
    expect(inlined).toBeDefined();
    const answer = (run: () => string) => {
      try {
        return run();
      } catch (error) {
        return `error ${(error as Error).message.match(/Code: (\d+)/)?.[1]}`;
      }
    };
    const bound = answer(() => session.queryBind(query, { p: value }, 'JSONEachRow'));
    expect(answer(() => session.query(inlined!, 'JSONEachRow'))).toBe(bound);
    if (!bound.startsWith('error')) expect(JSON.parse(bound).type).toBe(type);
  });
});
