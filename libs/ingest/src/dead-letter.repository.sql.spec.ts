import { describeStatementChecks, expectScopedSql, recordingClient, type RecordedStatement } from '@spanforge/testing/sql';
import { DeadLetterRepository, type DeadLetter } from './dead-letter.repository';

/**
 * Every statement DeadLetterRepository sends, as ClickHouse receives it, kept in __snapshots__ so
 * a change of SQL shows in review; the SQL itself runs against real ClickHouse in the ingest
 * integration tests.
 */

const PROJECT = { tenantId: 'tenant-1', projectId: 'project-1' };

/** Writes whose rows say whose they are (tenant_id and project_id columns) instead of a scope in their SQL. */
const ROW_SCOPED_WRITES = new Set(['ingest.insert_dead_letters']);

const LETTER: DeadLetter = {
  tenantId: 'tenant-1',
  projectId: 'project-1',
  id: 'job:42',
  kind: 'export_job',
  reason: 'retries_exhausted',
  error: 'connect ECONNREFUSED',
  exportId: 'export-1',
  spans: 12,
  payload: '{"name":"otlp-export","data":{}}',
  deadLetteredAt: Date.UTC(2026, 10, 20, 9),
  replayedAt: null,
  retentionDays: 30,
};

describe('DeadLetterRepository SQL', () => {
  const { client, record, insertedRows } = recordingClient();
  const repository = new DeadLetterRepository(client);

  /** Checks each statement's scope (or, for a row-scoped write, its rows'), then snapshots it under its query name. */
  function expectStatements(statements: RecordedStatement[], count: number): void {
    expect(statements).toHaveLength(count);
    for (const statement of statements) {
      expect(statement.logComment).toBe(statement.queryId);
      if (ROW_SCOPED_WRITES.has(statement.queryId)) {
        for (const row of insertedRows().flat())
          expect(row).toEqual(expect.objectContaining({ tenant_id: 'tenant-1', project_id: 'project-1' }));
      } else {
        expectScopedSql(statement);
      }
      expect(statement).toMatchSnapshot(statement.queryId);
    }
  }

  it('add', async () => {
    expectStatements(await record(() => repository.add([LETTER])), 1);
  });

  it('add: nothing to add sends nothing', async () => {
    expect(await record(() => repository.add([]))).toEqual([]);
  });

  it('list (with or without replayed letters: the same statement)', async () => {
    const [withReplayed] = await record(() => repository.list(PROJECT, { first: 50, includeReplayed: true }));
    const [pendingOnly] = await record(() => repository.list(PROJECT, { first: 50, includeReplayed: false }));
    expect(pendingOnly).toEqual(withReplayed);
    expectStatements([withReplayed!], 1);
  });

  it('pending (some ids or all of them: the same statement)', async () => {
    const [some] = await record(() => repository.pending(PROJECT, ['job:42'], 200));
    const [all] = await record(() => repository.pending(PROJECT, undefined, 200));
    expect(all).toEqual(some);
    expectStatements([some!], 1);
  });

  it('markReplayed', async () => {
    expectStatements(await record(() => repository.markReplayed([LETTER], Date.UTC(2026, 10, 21))), 1);
    expect(insertedRows()[0]![0]).toEqual(expect.objectContaining({ replayed_at: '2026-11-21 00:00:00.000' }));
  });
});

describeStatementChecks();
