import { Readable } from 'node:stream';
import type { Queue } from 'bullmq';
import { INGEST_JOB_OPTIONS, INGEST_QUEUE, IngestJobName, type ExportJob, type IngestJob } from '@spanforge/queue';
import { graphql } from '../support';
import { startIngestHarness, type IngestHarness } from './ingest-harness';
import { JSON_TYPE, postTraces } from './raw-otlp';
import { NS_PER_MS, hex, innocentTrace, jsonExport, jsonSpan } from './otlp-json';

/*
 * The store refusing rows for a reason nobody foresaw, injected at the worker's insert seam: the
 * good rows of the batch are stored at once, the refused ones are kept in the dead letters, logged
 * and accounted, and an operator replays them after the fix. Jobs that fail for good (here a
 * poison export) are moved to the dead letters too, never left to the queue's history.
 */

const MARKER = 'REFUSE-ME';
const ADMIN = 'test-admin-token-0123456789';

describe('dead letters', () => {
  let h: IngestHarness;
  let api: string;
  let refusing = true;
  const logged: string[] = [];
  const stderrWrite = process.stderr.write.bind(process.stderr);

  beforeAll(async () => {
    // What the worker logs is what an operator reads: kept to assert on (and still printed).
    process.stderr.write = ((chunk: string | Uint8Array, ...rest: unknown[]) => {
      logged.push(String(chunk));
      return (stderrWrite as (...args: unknown[]) => boolean)(chunk, ...rest);
    }) as typeof process.stderr.write;
    h = await startIngestHarness(
      {},
      {
        beforeWorkers: (infra) => {
          // The seam: a ClickHouse that refuses any spans insert holding a marked row, the way it refuses a value it cannot parse.
          const exec = infra.clickhouse.exec.bind(infra.clickhouse);
          infra.clickhouse.exec = (async (params: Parameters<typeof exec>[0]) => {
            const values = (params as { values?: unknown }).values;
            if (!params.query.startsWith('INSERT INTO spans') || !(values instanceof Readable)) return exec(params);
            let text = '';
            for await (const piece of values) text += String(piece);
            if (refusing && text.includes(MARKER))
              throw Object.assign(new Error(`Cannot parse input: unexpected ${MARKER}`), { code: '117', type: 'INCORRECT_DATA' });
            return exec({ ...params, values: Readable.from([text]) });
          }) as typeof infra.clickhouse.exec;
        },
      },
    );
    api = h.api;
  });
  afterAll(async () => {
    process.stderr.write = stderrWrite;
    await h?.stop();
  });

  const count = async (sql: string, p: string) => Number((await h.query<{ n: string }>(sql, { p }))[0]!.n);
  const admin = <T>(query: string, variables: Record<string, unknown> = {}) => graphql<T>(api, query, variables, ADMIN);

  it('stores the good rows of a refused batch, dead-letters the refused ones, and replays them after the fix', async () => {
    const [poisoned, innocent] = [await h.newProject(), await h.newProject()];
    const traceId = hex(16);
    const now = BigInt(Date.now()) * NS_PER_MS;
    const spans = Array.from({ length: 10 }, (_, i) =>
      jsonSpan({
        traceId,
        name: i % 4 === 1 ? `step ${MARKER} ${i}` : `step ${i}`,
        start: now + BigInt(i) * NS_PER_MS,
        end: now + BigInt(i + 1) * NS_PER_MS,
      }),
    );
    const refused = spans.filter((span) => (span.name as string).includes(MARKER));
    const other = innocentTrace(20);

    const answers = await Promise.all([
      postTraces(h.http, jsonExport(spans), { type: JSON_TYPE, key: poisoned.apiKey }),
      postTraces(h.http, jsonExport(other.spans), { type: JSON_TYPE, key: innocent.apiKey }),
    ]);
    expect(answers.map((a) => a.status)).toEqual([200, 200]);

    await h.waitForSpans(innocent.projectId, other.spans.length, 10_000);
    await h.waitForSpans(poisoned.projectId, spans.length - refused.length, 10_000);
    const deadSql =
      "SELECT count() AS n FROM dead_letters FINAL WHERE project_id = {p:String} AND kind = 'span_row' AND reason = 'store_refused' AND isNull(replayed_at)";
    await waitFor(async () => (await count(deadSql, poisoned.projectId)) === refused.length);
    expect(await count('SELECT count() AS n FROM spans FINAL WHERE project_id = {p:String}', poisoned.projectId)).toBe(
      spans.length - refused.length,
    );

    // What an operator sees: the log line, the metric, the accounting in ingestStats, the admin list.
    expect(logged.join('')).toContain(`${refused.length} span(s) of export`);
    expect(logged.join('')).toContain(`refused by ClickHouse and dead-lettered: Cannot parse input: unexpected ${MARKER}`);
    // The worker counts them once their accounting is stored too, which the reads above do not wait for.
    const counted = `spanforge_dead_lettered_spans_total{reason="store_refused"} ${refused.length}`;
    await waitFor(async () => (await h.services.metrics.getSingleMetricAsString('spanforge_dead_lettered_spans_total')).includes(counted));
    const stats = await graphql<{
      ingestStats: Array<{ accepted: number; deadLettered: number; deadLetteredByReason: Array<{ reason: string; spans: number }> }>;
    }>(api, '{ ingestStats { accepted deadLettered deadLetteredByReason { reason spans } } }', {}, poisoned.apiKey);
    expect(stats.errors).toBeUndefined();
    expect(stats.data!.ingestStats.reduce((n, m) => n + m.deadLettered, 0)).toBe(refused.length);
    expect(stats.data!.ingestStats.flatMap((m) => m.deadLetteredByReason)).toEqual([{ reason: 'store_refused', spans: refused.length }]);
    const listed = await admin<{
      deadLetters: Array<{ id: string; kind: string; reason: string; spans: number; replayedAt: string | null }>;
    }>('query($p: ID!) { deadLetters(projectId: $p) { id kind reason spans replayedAt } }', { p: poisoned.projectId });
    expect(listed.errors).toBeUndefined();
    expect(listed.data!.deadLetters.map(({ kind, reason, spans: n, replayedAt }) => ({ kind, reason, n, replayedAt }))).toEqual(
      refused.map(() => ({ kind: 'span_row', reason: 'store_refused', n: 1, replayedAt: null })),
    );
    // A project key cannot read another's failures, nor its own: operators only.
    expect(
      (await graphql(api, 'query($p: ID!) { deadLetters(projectId: $p) { id } }', { p: poisoned.projectId }, poisoned.apiKey)).errors?.[0]
        ?.extensions?.code,
    ).toBe('FORBIDDEN');

    // The fix lands; the replay writes them through the same path.
    refusing = false;
    const replay = await admin<{ replayDeadLetters: { pending: number } }>(
      'mutation($p: ID!) { replayDeadLetters(projectId: $p) { pending } }',
      { p: poisoned.projectId },
    );
    expect(replay.data?.replayDeadLetters.pending).toBe(refused.length);
    await h.waitForSpans(poisoned.projectId, spans.length, 10_000);
    await waitFor(async () => (await count(deadSql, poisoned.projectId)) === 0);
    const names = await h.query<{ name: string }>('SELECT name FROM spans FINAL WHERE project_id = {p:String} ORDER BY start_time', {
      p: poisoned.projectId,
    });
    expect(names.map((row) => row.name)).toEqual(spans.map((span) => span.name));
  });

  it('moves a job that fails for good from the queue to the dead letters, accounted and logged at ERROR', async () => {
    const project = await h.newProject();
    const queue = h.services.queues.queue<IngestJob>(INGEST_QUEUE) as Queue<IngestJob>;
    const exportId = `poison-${hex(4)}`;
    const job: ExportJob = {
      v: 1,
      tenantId: project.tenantId,
      projectId: project.projectId,
      format: 'json',
      body: Buffer.from('{"resourceSpans": [ not json').toString('base64'),
      receivedAt: Date.now(),
      exportId,
      receivedSpans: 3,
      acceptedSpans: 3,
      bytes: 28,
    };
    const added = await queue.add(IngestJobName.Export, job, INGEST_JOB_OPTIONS);

    const sql =
      "SELECT count() AS n FROM dead_letters FINAL WHERE project_id = {p:String} AND kind = 'export_job' AND reason = 'poison_export' AND spans = 3";
    await waitFor(async () => (await count(sql, project.projectId)) === 1);
    const [letter] = await h.query<{ id: string; export_id: string; payload: string }>(
      'SELECT id, export_id, payload FROM dead_letters FINAL WHERE project_id = {p:String}',
      { p: project.projectId },
    );
    expect({ id: letter!.id, exportId: letter!.export_id, data: (JSON.parse(letter!.payload) as { data: ExportJob }).data }).toEqual({
      id: `job:${added.id}`,
      exportId,
      data: job,
    });
    await waitFor(async () => (await queue.getJob(added.id!)) === undefined);
    await waitFor(
      async () =>
        (await count(
          "SELECT sum(spans) AS n FROM ingest_accounting FINAL WHERE project_id = {p:String} AND outcome = 'dead_lettered' AND reason = 'poison_export'",
          project.projectId,
        )) === 3,
    );
    expect(logged.join('')).toMatch(new RegExp(`ERROR .*ingest job job:${added.id} dead-lettered \\(poison_export, 3 span\\(s\\)\\)`));
  });
});

async function waitFor(condition: () => Promise<boolean>, timeoutMs = 15_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await condition())) {
    if (Date.now() > deadline) throw new Error(`condition not met within ${timeoutMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}
