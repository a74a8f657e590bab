import { RECORDING_SCOPE, describeStatementChecks, expectScopedQueries, recordingClient } from '@spanforge/testing/sql';
import { ScopedClickHouse } from './scoped-clickhouse';
import type { TraceFilter } from './trace-filter';
import { TraceRepository } from './trace.repository';

/**
 * Every statement TraceRepository sends, as ClickHouse receives it through ScopedClickHouse, kept
 * in __snapshots__ so a change of SQL shows in review. One test per method and statement shape;
 * the SQL itself runs against real ClickHouse in the query integration tests.
 */

const TRACE = '0af7651916cd43dd8448eb211c80319c';
const START = '2026-11-20 09:00:00.000000000';
const END = '2026-11-20 09:00:42.500000000';

const FILTER: TraceFilter = {
  from: '2026-11-20T00:00:00Z',
  to: '2026-11-27T00:00:00Z',
  sessionId: 'session-1',
  userId: 'user-1',
  rootName: 'agent.run',
  hasError: true,
  minIterations: 2,
  maxIterations: 9,
  model: 'gpt-4o-mini',
  attributes: [{ key: 'gen_ai.agent.name', value: 'support' }],
  feedback: { name: 'helpful', min: 3 },
};

describe('TraceRepository SQL', () => {
  const { client, record } = recordingClient();
  const repository = new TraceRepository(new ScopedClickHouse(client, RECORDING_SCOPE));

  it('bounds', async () => {
    expectScopedQueries(await record(() => repository.bounds(TRACE)), 1);
  });

  it('figures: the rollup, one trace within its days', async () => {
    expectScopedQueries(await record(() => repository.figures(TRACE, START, END)), 1);
  });

  it('latestFigures', async () => {
    expectScopedQueries(await record(() => repository.latestFigures(TRACE)), 1);
  });

  it('spans: without days, attributes or cursor', async () => {
    expectScopedQueries(await record(() => repository.spans(TRACE, undefined, undefined, false)), 1);
  });

  it('spans: within days, with attributes, after a cursor', async () => {
    expectScopedQueries(
      await record(() =>
        repository.spans(TRACE, START, END, true, { limit: 501, after: { startNs: '1795165200000000000', spanId: '00000000000000b1' } }),
      ),
      1,
    );
  });

  it('spanCountUpTo', async () => {
    expectScopedQueries(await record(() => repository.spanCountUpTo(TRACE, 10_001)), 1);
  });

  it('toolArguments', async () => {
    expectScopedQueries(await record(() => repository.toolArguments(TRACE)), 1);
  });

  it('spanContent', async () => {
    expectScopedQueries(await record(() => repository.spanContent(TRACE, '00000000000000b1', START, END)), 1);
  });

  it('spanLogEvents', async () => {
    expectScopedQueries(await record(() => repository.spanLogEvents(TRACE, '00000000000000b1')), 1);
  });

  it('medianIterations', async () => {
    expectScopedQueries(await record(() => repository.medianIterations(START)), 1);
  });

  // With no range the page is read from the newest minutes in three windows, then the whole
  // project: the recording client answers no rows, so every window is read, then the whole project.
  it('page: no filter, first page', async () => {
    const statements = await record(() => repository.page(undefined, 20, undefined));
    expectScopedQueries(statements, 5);
    expect(statements.map((s) => s.queryId).sort()).toEqual([
      'query.traces_count',
      'query.traces_page',
      'query.traces_page_newest',
      'query.traces_page_newest',
      'query.traces_page_newest',
    ]);
  });

  it('page: no filter, after a cursor', async () => {
    expectScopedQueries(await record(() => repository.page(undefined, 20, ['1795165200000000000', TRACE])), 5);
  });

  it('page: an attribute filter without a range reads the whole project once', async () => {
    const statements = await record(() =>
      repository.page({ attributes: [{ key: 'gen_ai.agent.name', value: 'support' }] }, 20, undefined, false),
    );
    expectScopedQueries(statements, 1);
    expect(statements[0]!.queryId).toBe('query.traces_page');
  });

  it('page: everything before a time, no total', async () => {
    expectScopedQueries(await record(() => repository.page({ to: '2026-11-27T00:00:00Z' }, 20, undefined, false)), 4);
  });

  it('page: every trace filter, after a cursor', async () => {
    expectScopedQueries(await record(() => repository.page(FILTER, 50, ['1795165200000000000', TRACE])), 2);
  });

  it('page without its total: one read, no count', async () => {
    const statements = await record(() => repository.page(FILTER, 20, undefined, false));
    expectScopedQueries(statements, 1);
    expect(statements[0]!.queryId).toBe('query.traces_page');
  });
});

describeStatementChecks();
