import { RECORDING_SCOPE, describeStatementChecks, expectScopedQueries, recordingClient } from '@spanforge/testing/sql';
import { FeedbackReadRepository } from './feedback.repository';
import { ScopedClickHouse } from './scoped-clickhouse';

/**
 * Every statement FeedbackReadRepository sends, as ClickHouse receives it through
 * ScopedClickHouse, kept in __snapshots__ so a change of SQL shows in review.
 */

describe('FeedbackReadRepository SQL', () => {
  const { client, record } = recordingClient();
  const repository = new FeedbackReadRepository(new ScopedClickHouse(client, RECORDING_SCOPE));

  it('traceFeedback', async () => {
    expectScopedQueries(await record(() => repository.traceFeedback('0af7651916cd43dd8448eb211c80319c')), 1);
  });
});

describeStatementChecks();
