import { RECORDING_SCOPE, describeStatementChecks, expectScopedQueries, recordingClient } from '@spanforge/testing/sql';
import { ReportRepository } from './report.repository';
import { ScopedClickHouse } from './scoped-clickhouse';

/**
 * Every statement ReportRepository sends, as ClickHouse receives it through ScopedClickHouse, kept
 * in __snapshots__ so a change of SQL shows in review.
 */

const FROM = Date.UTC(2026, 10, 16);
const TO = Date.UTC(2026, 10, 23);

describe('ReportRepository SQL', () => {
  const { client, record } = recordingClient();
  const repository = new ReportRepository(new ScopedClickHouse(client, RECORDING_SCOPE));

  it('totals', async () => {
    expectScopedQueries(await record(() => repository.totals(FROM, TO)), 1);
  });

  it('topTraces', async () => {
    expectScopedQueries(await record(() => repository.topTraces(FROM, TO, 10)), 1);
  });
});

describeStatementChecks();
