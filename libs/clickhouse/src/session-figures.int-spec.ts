import path from 'node:path';
import { projectRoot } from '@spanforge/config';
import { workerDataDir } from '@spanforge/testing';
import { createClickHouseClient, type ClickHouseClient } from './clickhouse.client';
import { migrateClickHouse } from './migrator';
import { withProjectFilters } from './statements';
import { REFRESH_SESSIONS_FIGURES_SQL } from './trace-figures.sql';

/** One row of the sessions rollup as its view writes one per insert of spans: each span's usage under its id. */
interface RollupRow {
  session_id: string;
  first_seen: string;
  last_seen: string;
  trace_ids: string[];
  /** The spans' ids, then one array per kind of value of SpanUsage, in the same order. */
  usage: [string[], number[], number[], number[], number[], number[], number[]];
}

/** A span's usage: its id, cost, uncached input, cache read, cache write, output and reasoning tokens. */
type SpanUsage = [string, number, number, number, number, number, number];

/**
 * One insert's row of a session: its first and last time (a day of 2024-02: a month, so a partition, of
 * the rollup no other test writes, whose parts a merge could fold into this test's), its traces, its
 * spans' usage.
 */
function row(session_id: string, first_seen: string, last_seen: string, trace_ids: string[], spans: SpanUsage[]): RollupRow {
  // The rollup keeps one array per kind of value, each in the spans' order.
  const usage = [0, 1, 2, 3, 4, 5, 6].map((k) => spans.map((span) => span[k])) as RollupRow['usage'];
  return { session_id, first_seen: `2024-02-${first_seen}.000000000`, last_seen: `2024-02-${last_seen}.000000000`, trace_ids, usage };
}

/**
 * Rows not yet merged, as the refresh finds them between inserts and merges. s1: span b stored
 * again in a later row with a greater cost but a smaller output (so neither row's copy is the
 * answer whole), span a again as it was; s2: two turns whose spans are all distinct; s3: a turn
 * without usage.
 */
const ROWS: RollupRow[] = [
  row(
    's1',
    '20 10:00:00',
    '20 10:00:05',
    ['t1'],
    [
      ['a', 0.5, 100, 20, 0, 10, 0],
      ['b', 0.25, 40, 0, 5, 9, 1],
    ],
  ),
  row(
    's1',
    '20 10:00:01',
    '20 10:00:06',
    ['t1'],
    [
      ['a', 0.5, 100, 20, 0, 10, 0],
      ['b', 0.75, 40, 0, 5, 4, 1],
    ],
  ),
  row('s1', '20 10:05:00', '20 10:05:09', ['t2'], [['c', 0.125, 7, 0, 0, 3, 2]]),
  row('s2', '21 08:00:00', '21 08:00:01', ['t3'], [['d', 1, 1, 0, 0, 1, 0]]),
  row(
    's2',
    '21 08:10:00',
    '21 08:10:04',
    ['t4'],
    [
      ['e', 2, 3, 1, 1, 5, 0],
      ['f', 0.5, 2, 0, 0, 2, 2],
    ],
  ),
  row('s3', '22 09:00:00', '22 09:00:02', ['t5'], []),
];

/** A session's figures from its rows: each span's greatest value of each kind, summed over its spans. */
function expectedFigures(sessionId: string) {
  const own = ROWS.filter((r) => r.session_id === sessionId);
  const greatest = new Map<string, number[]>();
  for (const {
    usage: [ids, ...values],
  } of own) {
    ids.forEach((id, i) => {
      const seen = greatest.get(id) ?? [0, 0, 0, 0, 0, 0];
      greatest.set(
        id,
        seen.map((v, k) => Math.max(v, values[k]![i]!)),
      );
    });
  }
  const total = (k: number) => [...greatest.values()].reduce((sum, v) => sum + v[k]!, 0);
  return {
    session_id: sessionId,
    trace_count: new Set(own.flatMap((r) => r.trace_ids)).size,
    cost_usd: total(0),
    input_tokens: total(1) + total(2) + total(3),
    output_tokens: total(4) + total(5),
    first_seen: own.map((r) => r.first_seen).sort()[0],
    last_seen: own
      .map((r) => r.last_seen)
      .sort()
      .at(-1),
  };
}

/**
 * The session figures refresh counts each span of a session once, at its greatest usage, whether
 * or not some span is in two of the session's rollup rows: a span stored again (a re-sent export)
 * before its rows are merged adds nothing, and a span whose copies differ counts each kind of value
 * at its greatest over the copies.
 */
describe('session figures from the sessions rollup', () => {
  let client: ClickHouseClient;
  const scope = { tenantId: `tenant-sf-${Date.now()}`, projectId: 'p1' };

  const rows = async <T>(query: string) => (await client.query({ query, query_params: scope, format: 'JSONEachRow' })).json<T>();

  beforeAll(async () => {
    client = createClickHouseClient({ kind: 'embedded', path: path.join(workerDataDir(), 'clickhouse') });
    await migrateClickHouse(client, path.join(projectRoot(), 'infra', 'clickhouse'));
    // One insert, not folded on the way in, so that the rows stay apart until a merge (one part is
    // never merged on its own).
    const values = ROWS.map((r) =>
      JSON.stringify({ tenant_id: scope.tenantId, project_id: scope.projectId, user_id: '', error_span_ids: [], ...r }),
    );
    await client.command({
      query: `INSERT INTO sessions (tenant_id, project_id, session_id, first_seen, last_seen, user_id, trace_ids, error_span_ids, usage)
              SETTINGS optimize_on_insert = 0 FORMAT JSONEachRow\n${values.join('\n')}`,
    });
  });
  afterAll(async () => {
    await client.close();
  });

  it('counts each span once at its greatest usage, with and without a span in two rows', async () => {
    const stored = await rows<{ session_id: string; n: string }>(
      `SELECT session_id, count() AS n FROM sessions WHERE tenant_id = {tenantId:String} AND project_id = {projectId:String}
       GROUP BY session_id ORDER BY session_id`,
    );
    expect(stored.map((r) => [r.session_id, Number(r.n)])).toEqual([
      ['s1', 3],
      ['s2', 2],
      ['s3', 1],
    ]);

    await client.command({
      query: withProjectFilters(REFRESH_SESSIONS_FIGURES_SQL, scope),
      query_params: { ...scope, sessions: ['s1', 's2', 's3'] },
    });
    // (64-bit integers come as text.)
    const figures = await rows<Record<string, unknown>>(
      `SELECT session_id, trace_count, cost_usd, toUInt32(input_tokens) AS input_tokens, toUInt32(output_tokens) AS output_tokens,
         first_seen, last_seen FROM session_figures FINAL
       WHERE tenant_id = {tenantId:String} AND project_id = {projectId:String} ORDER BY session_id`,
    );
    const expected = ['s1', 's2', 's3'].map(expectedFigures);
    expect(figures).toEqual(expected.map((e) => ({ ...e, cost_usd: expect.closeTo(e.cost_usd, 12) })));
    // s1 counts span a once and span b at the later copy's cost and the earlier one's output, not the rows' plain sums.
    expect(expected[0]).toMatchObject({ cost_usd: 0.5 + 0.75 + 0.125, input_tokens: 120 + 45 + 7, output_tokens: 10 + 10 + 5 });
  });
});
