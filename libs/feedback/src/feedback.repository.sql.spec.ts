import { describeStatementChecks, expectScopedSql, recordingClient, type RecordedStatement } from '@spanforge/testing/sql';
import type { FeedbackRecord } from './feedback.model';
import { FeedbackRepository } from './feedback.repository';

/**
 * Every ClickHouse statement FeedbackRepository sends, as ClickHouse receives it, kept in
 * __snapshots__ so a change of SQL shows in review. The score configs live in PostgreSQL and are
 * left out: the pool here refuses every call.
 */

const SCOPE_A = { tenantId: 'tenant-1', projectId: 'project-1' };
const T1 = '0af7651916cd43dd8448eb211c80319c';

/** Writes whose rows say whose they are (tenant_id and project_id columns): one insert holds many projects' scores. */
const ROW_SCOPED_WRITES = new Set(['feedback.insert']);

const SCORE: FeedbackRecord = {
  id: 'score-1',
  traceId: T1,
  spanId: '',
  name: 'helpful',
  dataType: 'NUMERIC',
  valueNumber: 4,
  valueText: '4',
  comment: 'good',
  source: 'api',
};

const noPostgres = {
  query: () => {
    throw new Error('this spec covers the ClickHouse statements only');
  },
} as unknown as ConstructorParameters<typeof FeedbackRepository>[1];

describe('FeedbackRepository SQL (ClickHouse)', () => {
  const { client, record, insertedRows } = recordingClient();
  const repository = new FeedbackRepository(client, noPostgres);

  /** Checks each statement's scope (or, for a row-scoped write, its rows'), then snapshots it under its log comment. */
  function expectStatements(statements: RecordedStatement[], count: number): void {
    expect(statements).toHaveLength(count);
    for (const statement of statements) {
      const name = statement.logComment ?? statement.queryId;
      if (ROW_SCOPED_WRITES.has(name)) {
        for (const row of insertedRows().flat())
          expect(row).toEqual(expect.objectContaining({ tenant_id: expect.any(String), project_id: expect.any(String) }));
      } else {
        expectScopedSql(statement);
      }
      expect(statement).toMatchSnapshot(name);
    }
  }

  it('insert: scores of two projects in one insert', async () => {
    const statements = await record(() =>
      repository.insert([
        // A re-send: first received a month before.
        { scope: SCOPE_A, record: SCORE, receivedAt: Date.UTC(2026, 10, 20, 9), firstReceivedAt: Date.UTC(2026, 9, 20, 9) },
        {
          scope: { tenantId: 'tenant-2', projectId: 'project-2' },
          record: { ...SCORE, id: 'score-2' },
          receivedAt: Date.UTC(2026, 10, 20, 9, 0, 1),
        },
      ]),
    );
    expectStatements(statements, 1);
    expect(insertedRows()[0]!.map((row) => [row.tenant_id, row.project_id, row.received_at, row.updated_at])).toEqual([
      ['tenant-1', 'project-1', '2026-10-20 09:00:00.000', '2026-11-20 09:00:00.000'],
      ['tenant-2', 'project-2', '2026-11-20 09:00:01.000', '2026-11-20 09:00:01.000'],
    ]);
  });

  it('storedScoreIds', async () => {
    expectStatements(await record(() => repository.storedScoreIds(SCOPE_A, ['score-1', 'score-2'])), 1);
  });

  it('refreshSessions', async () => {
    expectStatements(await record(() => repository.refreshSessions(SCOPE_A, [T1])), 1);
  });

  it('storedTraces', async () => {
    expectStatements(await record(() => repository.storedTraces(SCOPE_A, [T1])), 1);
  });
});

describeStatementChecks();
