import { describeStatementChecks, expectScopedSql, recordingClient, type RecordedStatement } from '@spanforge/testing/sql';
import type { ClickHouseClient } from '@spanforge/clickhouse';
import { MAX_LOOK_GROUPS, SpanRepository, lookGroups, type AccountingRow, type TraceLook } from './span.repository';

/**
 * Every statement SpanRepository sends, as ClickHouse receives it, kept in __snapshots__ so a
 * change of SQL shows in review. One test per method and statement shape; the SQL itself runs
 * against real ClickHouse in the ingest integration tests.
 */

const PROJECT = { tenantId: 'tenant-1', projectId: 'project-1' };
const T1 = '0af7651916cd43dd8448eb211c80319c';
const T2 = '5b8efff798038103d269b633813fc60c';

/**
 * Writes whose rows say whose they are (tenant_id and project_id columns) instead of a scope in
 * their SQL: the writer's group commit makes one insert of many projects' rows.
 */
const ROW_SCOPED_WRITES = new Set(['ingest.insert_spans', 'ingest.insert_accounting']);

/** What the fake answers ingest.filed_minutes with. */
let filed: Array<{ trace_id: string; minute_ms: number; present: number; stamp: string }> = [];
/** What the fake answers ingest.trace_times with (none: every trace in one group). */
let times: Array<{ trace_id: string; first_start: string; last_end: string }> = [];
/** What the fake answers ingest.stored_traces with. */
let indexed: Array<{
  trace_id: string;
  session_id: string;
  has_sessionless: number;
  first_start: string;
  last_end: string;
  looked_at: string;
}> = [];

describe('SpanRepository SQL', () => {
  const { client, record, insertedRows } = recordingClient((queryId) =>
    queryId === 'ingest.filed_minutes'
      ? filed
      : queryId === 'ingest.trace_times'
        ? times
        : queryId === 'ingest.stored_traces'
          ? indexed
          : queryId === 'ingest.roots_to_run'
            ? indexed.filter((r) => r.trace_id === T2).map((r) => ({ trace_id: r.trace_id }))
            : [],
  );
  const repository = new SpanRepository(client);

  beforeEach(() => {
    filed = [];
    times = [];
    indexed = [];
  });

  /** Checks each statement's scope (or, for a row-scoped write, its rows'), then snapshots it under its query name. */
  function expectStatements(statements: RecordedStatement[], count: number): void {
    expect(statements).toHaveLength(count);
    for (const statement of statements) {
      expect(statement.logComment).toBe(statement.queryId);
      if (ROW_SCOPED_WRITES.has(statement.queryId)) {
        for (const row of insertedRows().flat())
          expect(row).toEqual(expect.objectContaining({ tenant_id: expect.any(String), project_id: expect.any(String) }));
      } else {
        expectScopedSql(statement);
      }
      expect(statement).toMatchSnapshot(statement.queryId);
    }
  }

  it('insertSpanLines', async () => {
    const line = `${JSON.stringify({ tenant_id: 'tenant-1', project_id: 'project-1', trace_id: T1, span_id: '00000000000000aa' })}\n`;
    expectStatements(await record(() => repository.insertSpanLines([Buffer.from(line)])), 1);
  });

  it('insertAccounting', async () => {
    const row: AccountingRow = {
      tenant_id: 'tenant-1',
      project_id: 'project-1',
      minute: 1_795_165_200,
      outcome: 'accepted',
      reason: '',
      batch_id: 'batch-1',
      requests: 1,
      spans: 12,
      bytes: 4_096,
    };
    expectStatements(await record(() => repository.insertAccounting([row, { ...row, tenant_id: 'tenant-2', project_id: 'project-2' }])), 1);
  });

  it('storedTraces: trace_index, then the roots to run within the time it gives each group of traces', async () => {
    indexed = [
      {
        trace_id: T1,
        session_id: 's-1',
        has_sessionless: 0,
        first_start: '2026-12-01 10:00:05.000000000',
        last_end: '2026-12-01 10:00:09.000000000',
        looked_at: '2026-12-01 10:00:12.345678',
      },
      {
        trace_id: T2,
        session_id: '',
        has_sessionless: 1,
        first_start: '2026-11-30 23:59:58.500000000',
        last_end: '2026-12-01 00:00:01.000000000',
        looked_at: '2026-12-01 10:00:12.345678',
      },
    ];
    let stored: Awaited<ReturnType<SpanRepository['storedTraces']>> = { traces: new Map() };
    const statements = await record(async () => {
      stored = await repository.storedTraces(PROJECT, [T1, T2, '6c0f5f6e7d3a4b2c9e8f7a6b5c4d3e2f'], [T2]);
    });
    expectStatements(statements, 2);
    expect(statements[1]!.params).toEqual(expect.arrayContaining(['from0', 'to0', 'traceIds0', 'from1', 'to1', 'traceIds1', 'plainRoots']));
    expect(stored.traces).toEqual(
      new Map([
        [T1, { sessionId: 's-1', hasSessionless: false, rootToRun: false }],
        [T2, { sessionId: '', hasSessionless: true, rootToRun: true }],
      ]),
    );
    // The look: the engine's clock when it read, and the traces found in groups of like time (T2
    // starts and ends ten hours before T1), each from its first start to its last end.
    expect(stored.look).toEqual({
      at: '2026-12-01 10:00:12.345678',
      groups: [
        { from: '2026-11-30 23:59:58.500000000', to: '2026-12-01 00:00:01.000000000', traceIds: [T2] },
        { from: '2026-12-01 10:00:05.000000000', to: '2026-12-01 10:00:09.000000000', traceIds: [T1] },
      ],
    });
  });

  it('storedTraces: nothing stored, nothing more read', async () => {
    let stored: Awaited<ReturnType<SpanRepository['storedTraces']>> | undefined;
    expectStatements(
      await record(async () => {
        stored = await repository.storedTraces(PROJECT, [T1], []);
      }),
      1,
    );
    expect(stored).toEqual({ traces: new Map() });
  });

  /** The parameters of each statement refreshTraceFigures sends, and what it answers, on a client that answers `filed`. */
  async function refreshed(traceIds: string[], recheck: string[] = [], look?: Parameters<SpanRepository['refreshTraceFigures']>[3]) {
    const sent: Array<Record<string, unknown>> = [];
    const client = {
      command: async ({ query_params }: { query_params: Record<string, unknown> }) => void sent.push(query_params),
      // The statements' parameters but the lookup of the traces' times, which answers `times`.
      query: async ({ query_params, query_id }: { query_params: Record<string, unknown>; query_id: string }) => {
        if (query_id.startsWith('ingest.trace_times')) return { json: async () => times };
        sent.push(query_params);
        return { json: async () => filed };
      },
    } as unknown as ClickHouseClient;
    const { minutes } = await new SpanRepository(client).refreshTraceFigures(PROJECT, traceIds, recheck, look);
    return { sent, minutes: minutes.sort() };
  }

  const hour = Date.UTC(2026, 10, 19, 10);
  const older = '2026-11-19 10:05:00.000001';
  const newer = '2026-11-19 10:05:02.500000';

  it('refreshTraceFigures: the refresh, then every minute the traces are filed under; nothing to empty', async () => {
    filed = [{ trace_id: T1, minute_ms: hour, present: 1, stamp: newer }];
    // Without a look, the traces' times first, to group them.
    const statements = await record(() => repository.refreshTraceFigures(PROJECT, [T1, T2]));
    expectStatements(statements, 3);
    expect(statements.map((s) => s.queryId)).toEqual(['ingest.trace_times', 'ingest.refresh_trace_figures', 'ingest.filed_minutes']);
    expect((await refreshed([T1, T2])).minutes).toEqual([hour]);
  });

  it("refreshTraceFigures empties every minute a trace is filed under but its newest computation's, with that stamp", async () => {
    // T1's start moved a day earlier (its newest computation under 23:59 the day before, its older one under 00:00).
    // T2: another round's newer computation filed it under 10:00 while this one filed it under 10:02 (an older look's).
    // 10:03 was emptied before: it holds neither.
    filed = [
      { trace_id: T1, minute_ms: hour - 10 * 3_600_000, present: 1, stamp: older },
      { trace_id: T1, minute_ms: hour - 10 * 3_600_000 - 60_000, present: 1, stamp: newer },
      { trace_id: T2, minute_ms: hour, present: 1, stamp: newer },
      { trace_id: T2, minute_ms: hour + 120_000, present: 1, stamp: older },
      { trace_id: T2, minute_ms: hour + 180_000, present: 0, stamp: newer },
    ];
    const statements = await record(() => repository.refreshTraceFigures(PROJECT, [T1, T2]));
    expectStatements(statements, 4);
    expect(statements.map((s) => s.queryId)).toEqual([
      'ingest.trace_times',
      'ingest.refresh_trace_figures',
      'ingest.filed_minutes',
      'ingest.vacate_trace_minutes',
    ]);
    const { sent, minutes } = await refreshed([T1, T2]);
    expect(sent.at(-1)).toEqual(
      expect.objectContaining({
        vacatedTraces: [T1, T2],
        vacatedMinutes: [hour - 10 * 3_600_000, hour + 120_000],
        vacatedStamps: [newer, newer],
      }),
    );
    expect(minutes).toEqual([hour - 10 * 3_600_000 - 60_000, hour - 10 * 3_600_000, hour, hour + 120_000].sort());
  });

  it('refreshTraceFigures keeps the later of two minutes whose filings carry the same stamp', async () => {
    filed = [
      { trace_id: T1, minute_ms: hour + 60_000, present: 1, stamp: newer },
      { trace_id: T1, minute_ms: hour, present: 1, stamp: newer },
    ];
    expect((await refreshed([T1])).sent.at(-1)).toEqual(expect.objectContaining({ vacatedTraces: [T1], vacatedMinutes: [hour] }));
  });

  it('refreshTraceFigures of a job that ran before recomputes every minute its traces are filed under', async () => {
    // The earlier run emptied 10:03 and stopped before recomputing it.
    filed = [
      { trace_id: T1, minute_ms: hour, present: 1, stamp: newer },
      { trace_id: T1, minute_ms: hour + 180_000, present: 0, stamp: newer },
      { trace_id: T2, minute_ms: hour + 240_000, present: 0, stamp: newer },
    ];
    expect((await refreshed([T1, T2], [T1])).minutes).toEqual([hour, hour + 180_000]);
    expect((await refreshed([T1, T2])).minutes).toEqual([hour]);
  });

  /** A look that found T1 at 10:00 and, in a group of its own, T2 a month before. */
  const look: TraceLook = {
    at: older,
    groups: [
      { from: '2026-10-19 08:00:00.000000000', to: '2026-10-19 08:00:04.000000000', traceIds: [T2] },
      { from: '2026-11-19 10:00:30.000000000', to: '2026-11-19 10:01:10.000000000', traceIds: [T1] },
    ],
  };

  it('refreshTraceFigures after a look: each group bounded by it instead of trace_index, stamped with its time', async () => {
    filed = [{ trace_id: T1, minute_ms: hour, present: 1, stamp: older }];
    const statements = await record(() => repository.refreshTraceFigures(PROJECT, [T1, T2], [], look));
    expectStatements(statements, 2);
    const [refresh, filedRead] = statements as [RecordedStatement, RecordedStatement];
    expect(refresh.params).toEqual(expect.arrayContaining(['from0', 'to0', 'traceIds0', 'from1', 'to1', 'traceIds1', 'lookedAt']));
    expect(refresh.sql).not.toContain('trace_index');
    expect(refresh.sql).not.toContain('now64');
    expect(refresh.sql).toContain('{lookedAt:DateTime64(6, ');
    // Where the traces are filed is read bounded by what trace_index holds as it runs (a later
    // look's computation may start before this look), in the look's groups.
    expect(filedRead.sql).toContain('trace_index');
    expect(filedRead.params).toEqual(expect.arrayContaining(['traceIds0', 'traceIds1']));
    const [refreshParams, filedParams, ...more] = (await refreshed([T1, T2], [], look)).sent as Array<Record<string, unknown>>;
    expect(refreshParams).toEqual(
      expect.objectContaining({
        lookedAt: older,
        from0: '2026-10-19 08:00:00.000000000',
        traceIds0: [T2],
        to1: '2026-11-19 10:01:10.000000000',
        traceIds1: [T1],
      }),
    );
    // The filings read: every trace in the order given, with its group's number, and each group's ids.
    expect(filedParams).toEqual(expect.objectContaining({ traceIds: [T1, T2], traceGroups: [2, 1], traceIds0: [T2], traceIds1: [T1] }));
    // Nothing to empty: no third statement.
    expect(more).toEqual([]);
  });

  it('refreshTraceFigures of a trace the look did not find: bounded by trace_index as it runs, every trace grouped by its time there', async () => {
    const T3 = '6c0f5f6e7d3a4b2c9e8f7a6b5c4d3e2f';
    // A round refreshing T1 and a back-fill's T3 (which it did not look for); T2, in the look, is not refreshed.
    // trace_index holds T3 a month before T1.
    times = [
      { trace_id: T1, first_start: '2026-11-19 10:00:30.000000000', last_end: '2026-11-19 10:01:10.000000000' },
      { trace_id: T3, first_start: '2026-10-19 07:00:00.000000000', last_end: '2026-10-19 07:00:09.000000000' },
    ];
    const statements = await record(() => repository.refreshTraceFigures(PROJECT, [T1, T3], [], look));
    expectStatements(statements, 3);
    const [lookup, refresh] = statements as [RecordedStatement, RecordedStatement];
    expect(lookup.queryId).toBe('ingest.trace_times');
    expect(refresh.sql).toContain('trace_index');
    expect(refresh.sql).toContain('now64');
    expect(refresh.params).not.toContain('lookedAt');
    // Each group's ids (by time: T3's first), and every trace in the order given with its group's number.
    const [refreshParams, filedParams] = (await refreshed([T1, T3], [], look)).sent;
    expect(refreshParams).toEqual(expect.objectContaining({ traceIds: [T1, T3], traceGroups: [2, 1], traceIds0: [T3], traceIds1: [T1] }));
    expect(refreshParams).not.toHaveProperty('traceIds2');
    expect(filedParams).toEqual(expect.objectContaining({ traceIds: [T1, T3], traceGroups: [2, 1] }));
  });

  it("refreshTraceFigures keeps the traces of each group in the order it is given them, not the look's answer's", async () => {
    // The look's answer lists them in the engine's order; a round refreshing the traces it looked
    // for, in the order it looked for them, then sends the look's own condition again (whose
    // granules that matched nothing the engine remembers).
    const oneGroup: TraceLook = { at: older, groups: [{ ...look.groups[1]!, traceIds: [T2, T1] }] };
    const [refreshParams, filedParams] = (await refreshed([T1, T2], [], oneGroup)).sent;
    expect(refreshParams).toEqual(expect.objectContaining({ traceIds0: [T1, T2] }));
    expect(filedParams).toEqual(expect.objectContaining({ traceIds: [T1, T2], traceGroups: [1, 1], traceIds0: [T1, T2] }));
  });

  describe('lookGroups', () => {
    const trace = (traceId: string, firstStart: string, lastEnd: string) => ({ traceId, firstStart, lastEnd });

    it('puts traces that start on one day and end on one day together, each group from its first start to its last end', () => {
      expect(
        lookGroups([
          trace('a', '2026-11-19 10:00:30.000000000', '2026-11-19 10:00:40.000000000'),
          trace('late', '2026-10-19 08:00:00.000000000', '2026-10-19 08:00:04.000000000'),
          trace('b', '2026-11-19 16:00:10.000000000', '2026-11-19 16:00:50.000000000'),
          trace('long', '2026-11-17 09:00:00.000000000', '2026-11-19 10:00:20.000000000'),
          trace('midnight', '2026-11-19 23:59:59.000000000', '2026-11-20 00:00:01.000000000'),
        ]),
      ).toEqual([
        { from: '2026-10-19 08:00:00.000000000', to: '2026-10-19 08:00:04.000000000', traceIds: ['late'] },
        { from: '2026-11-17 09:00:00.000000000', to: '2026-11-19 10:00:20.000000000', traceIds: ['long'] },
        { from: '2026-11-19 10:00:30.000000000', to: '2026-11-19 16:00:50.000000000', traceIds: ['a', 'b'] },
        { from: '2026-11-19 23:59:59.000000000', to: '2026-11-20 00:00:01.000000000', traceIds: ['midnight'] },
      ]);
    });

    it(`joins the neighbours whose joined time is shortest until ${MAX_LOOK_GROUPS} are left`, () => {
      // One trace on each of MAX_LOOK_GROUPS + 1 days, at noon, but t5 at 23:58 and t6 at 00:02 the next day: four minutes apart.
      const daily = Array.from({ length: MAX_LOOK_GROUPS + 1 }, (_, d) => {
        const time = d === 5 ? '23:58' : d === 6 ? '00:02' : '12:00';
        const text = `2026-11-${String(d + 1).padStart(2, '0')} ${time}:00.000000000`;
        return trace(`t${d}`, text, text);
      });
      const groups = lookGroups(daily);
      expect(groups).toHaveLength(MAX_LOOK_GROUPS);
      expect(groups.map((g) => g.traceIds)).toEqual(
        daily.map((t) => t.traceId).flatMap((id) => (id === 't5' ? [['t5', 't6']] : id === 't6' ? [] : [[id]])),
      );
      expect(groups[5]).toEqual({ from: '2026-11-06 23:58:00.000000000', to: '2026-11-07 00:02:00.000000000', traceIds: ['t5', 't6'] });
    });
  });

  /** The parameters of each statement a call sends (the recorder keeps only their names). */
  async function sentParams(call: (r: SpanRepository) => Promise<void>): Promise<Array<Record<string, unknown>>> {
    const sent: Array<Record<string, unknown>> = [];
    const client = {
      command: async ({ query_params }: { query_params: Record<string, unknown> }) => void sent.push(query_params),
    } as unknown as ClickHouseClient;
    await call(new SpanRepository(client));
    return sent;
  }

  it.each([
    [
      'refreshTraceMetrics: the minutes, then their hours',
      (r: SpanRepository, minutes: number[]) => r.refreshTraceMetrics(PROJECT, minutes),
      [Date.UTC(2026, 10, 19, 10, 5), Date.UTC(2026, 10, 19, 10, 59), Date.UTC(2026, 10, 19, 11, 0)],
      { hours: [Date.UTC(2026, 10, 19, 10), Date.UTC(2026, 10, 19, 11)] },
    ],
    [
      'refreshDailyCosts: the minutes, then their days',
      (r: SpanRepository, minutes: number[]) => r.refreshDailyCosts(PROJECT, minutes),
      [Date.UTC(2026, 10, 19, 23, 59), Date.UTC(2026, 10, 20, 0, 0), Date.UTC(2026, 10, 20, 0, 1)],
      { days: ['2026-11-19', '2026-11-20'] },
    ],
  ] as const)('%s', async (_name, call, minutes, coarser) => {
    expectStatements(await record(() => call(repository, [...minutes])), 2);
    expect(await sentParams((r) => call(r, [...minutes]))).toEqual([
      expect.objectContaining({ minutes }),
      expect.objectContaining(coarser),
    ]);
  });

  it.each([
    ['refreshDailyCosts', (r: SpanRepository) => r.refreshDailyCosts(PROJECT, [Date.UTC(2026, 10, 19, 10, 5)])],
    ['refreshTraceMetrics', (r: SpanRepository) => r.refreshTraceMetrics(PROJECT, [Date.UTC(2026, 10, 19, 10, 5)])],
  ] as const)('%s leaves out erased traces, as the reads do, in the trace minutes it sums', async (_name, call) => {
    // The statements as sent, with their engine-side filters whole (the recorder shortens them).
    const sent: string[] = [];
    const client = { command: async ({ query }: { query: string }) => void sent.push(query) } as unknown as ClickHouseClient;
    await call(new SpanRepository(client));
    expect(sent).toHaveLength(2);
    const filters = sent[0]!.slice(sent[0]!.indexOf('additional_table_filters'));
    const filterOf = /'trace_minutes': '((?:[^'\\]|\\.|'')*)'/.exec(filters)?.[1] ?? '';
    expect(filterOf).toContain('NOT IN (SELECT trace_id FROM erased_traces');
  });

  it('refreshSessionFigures', async () => {
    expectStatements(await record(() => repository.refreshSessionFigures(PROJECT, ['session-1'])), 1);
  });

  it('rewrittenSpanLines', async () => {
    expectStatements(await record(() => repository.rewrittenSpanLines(PROJECT, [T1, T2])), 1);
  });

  it("rewrittenSpanLines reads each of the look's groups in its own time", async () => {
    const statements = await record(() => repository.rewrittenSpanLines(PROJECT, [T1, T2], look));
    expectStatements(statements, 1);
    expect(statements[0]!.params).toEqual(expect.arrayContaining(['traceIds', 'traceGroups', 'traceIds0', 'traceIds1']));
  });

  it('sends nothing for no traces or days', async () => {
    const none = await record(async () => {
      await repository.storedTraces(PROJECT, [], []);
      await repository.refreshTraceFigures(PROJECT, []);
      await repository.refreshSessionFigures(PROJECT, []);
      await repository.refreshDailyCosts(PROJECT, []);
      await repository.refreshTraceMetrics(PROJECT, []);
      await repository.rewrittenSpanLines(PROJECT, []);
    });
    expect(none).toEqual([]);
  });
});

describeStatementChecks();
