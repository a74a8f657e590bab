import { expectScopedSql, recordingClient } from '@spanforge/testing/sql';
import { SpanMetricsSealer } from './span-metrics.sealer';

/**
 * The sealer's two statements, as ClickHouse receives them, kept in __snapshots__. Finding the
 * minutes due reads every project's recent dirt by design (it is the worker's own bookkeeping, one
 * statement for all tenants); sealing is bound to one project at a time.
 */
describe('SpanMetricsSealer SQL', () => {
  const due = [{ tenant_id: 'tenant-1', project_id: 'project-1', minutes: [1_796_000_040_000, 1_796_000_100_000, 1_796_000_160_000] }];
  const dueHours = [{ tenant_id: 'tenant-1', project_id: 'project-1', hours: [1_795_996_800_000] }];
  const answers: Record<string, unknown[]> = { 'ingest.span_metrics_due': due, 'ingest.span_metrics_due_hours': dueHours };
  const { client, record } = recordingClient((queryId) => answers[queryId] ?? []);
  const log = { warn: () => undefined, error: () => undefined };

  it('finds the minutes due and seals them in statements of at most minutesPerStatement, then merges the hours due', async () => {
    const sealer = new SpanMetricsSealer(client, log, { afterSeconds: 120, intervalMs: 10_000, minutesPerStatement: 2 });
    let sealed = 0;
    const statements = await record(async () => {
      sealed = await sealer.sealDue();
    });

    expect(sealed).toBe(3);
    expect(statements.map((s) => s.queryId)).toStrictEqual([
      'ingest.span_metrics_due',
      'ingest.span_metrics_seal',
      'ingest.span_metrics_seal',
      'ingest.span_metrics_due_hours',
      'ingest.span_metrics_seal_hours',
      'ingest.span_metrics_seal_coarse_hours',
    ]);
    for (const statement of [statements[1]!, statements[4]!, statements[5]!]) expectScopedSql(statement);
    // The coarse hour rollup: the same merge without the span name.
    expect(statements[5]!.sql).toContain('INSERT INTO span_metrics_hour_coarse');
    expect(statements[5]!.sql).not.toMatch(/\bname\b/);
    expect([statements[0], statements[1], statements[3], statements[4], statements[5]]).toMatchSnapshot();
  });

  it('stops after the statement running when stop is called, leaving the rest of the pass undone', async () => {
    let entered!: () => void;
    const inFirstSeal = new Promise<void>((resolve) => (entered = resolve));
    let release!: () => void;
    const gate = new Promise<void>((resolve) => (release = resolve));
    const slowClient = Object.create(client) as typeof client;
    slowClient.command = async (params) => {
      const answer = await client.command(params);
      entered();
      await gate;
      return answer;
    };
    const sealer = new SpanMetricsSealer(slowClient, log, { afterSeconds: 120, intervalMs: 1, minutesPerStatement: 2 });
    const statements = await record(async () => {
      sealer.start();
      await inFirstSeal;
      const stopped = sealer.stop();
      release();
      await stopped;
    });

    expect(statements.map((s) => s.queryId)).toStrictEqual(['ingest.span_metrics_due', 'ingest.span_metrics_seal']);
  });
});
