import 'reflect-metadata';
import { ERASED_TRACE_TABLES } from '@spanforge/ingest';
import { quiet, startBenchStack, seededDatasetArguments } from './bench-stack';
import { argument, percentile, progress, writeResults } from './report';
import { seededOnce } from './seed-volume';

/**
 * `npm run bench:erasure -- --spans N --data-dir D`: erases one user of the seeded dataset
 * (`user-<k>`, 1/500 of its sessions) through `eraseData`, and reports how long until the answer
 * (from which no read returns the user's data) and until the worker's job has left no row of it in
 * any table, and the reads' p50 before and after (the tombstones are one more filter a read
 * carries). It changes the dataset: each run erases a user not erased yet (`--user` to choose).
 */
const READS = 20;

async function main(): Promise<void> {
  const { spans, dataDir } = seededDatasetArguments();
  const infra = await startBenchStack(dataDir);
  try {
    const seed = await seededOnce(infra, dataDir, spans);
    await infra.startWorkers();
    const api = await infra.startApi();
    const scope = { tenantId: seed.tenantId, projectId: seed.projectId };
    const raw = async (sql: string, params: Record<string, unknown> = {}) =>
      (
        await (
          await infra.clickhouse.query({ query: sql, query_params: { ...scope, ...params }, format: 'JSONEachRow' })
        ).json<Record<string, string>>()
      )[0]!;
    const graphql = async <T>(query: string, variables: Record<string, unknown> = {}): Promise<T> => {
      const response = await fetch(`${api}/graphql`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', authorization: `Bearer ${seed.apiKey}` },
        body: JSON.stringify({ query, variables }),
      });
      const body = (await response.json()) as { data?: T; errors?: unknown[] };
      if (body.errors) throw new Error(`GraphQL error: ${JSON.stringify(body.errors)}`);
      return body.data!;
    };
    let user = argument('--user', '');
    for (let k = 0; !user && k < 500; k++) {
      const candidate = `user-${k}`;
      const row = await raw(
        'SELECT count() AS n FROM spans WHERE tenant_id = {tenantId:String} AND project_id = {projectId:String} AND user_id = {u:String}',
        {
          u: candidate,
        },
      );
      if (Number(row.n) > 0) user = candidate;
    }
    if (!user) throw new Error('every user of the dataset is erased already: seed a new data directory');
    const userSpans = async () =>
      Number(
        (
          await raw(
            'SELECT count() AS n FROM spans WHERE tenant_id = {tenantId:String} AND project_id = {projectId:String} AND user_id = {u:String}',
            { u: user },
          )
        ).n,
      );
    const before = await userSpans();
    progress(`erasing ${user}: ${before.toLocaleString('en')} spans of ${seed.spans.toLocaleString('en')}`);

    const pages = `query($from: DateTime!, $to: DateTime!) {
      sessions(filter: { from: $from, to: $to }, first: 20) { totalCount nodes { sessionId costUsd } }
      traces(filter: { from: $from, to: $to }, first: 20) { nodes { traceId costUsd } }
    }`;
    // Measured with no merge running (a merge left by the erasure's deletes would tax the reads after).
    const readP50 = async () => {
      await quiet(infra.clickhouse);
      const samples: number[] = [];
      for (let i = 0; i < READS + 5; i++) {
        const started = performance.now();
        await graphql(pages, { from: seed.from, to: seed.to });
        if (i >= 5) samples.push(performance.now() - started);
      }
      return Number(percentile(samples, 0.5).toFixed(1));
    };
    const readsBeforeMs = await readP50();

    const started = performance.now();
    const { eraseData } = await graphql<{ eraseData: { id: string; traceCount: number } }>(
      'mutation($input: EraseDataInput!) { eraseData(input: $input) { id traceCount } }',
      { input: { projectId: seed.projectId, userId: user } },
    );
    const answeredMs = performance.now() - started;
    // From the answer on: the user's sessions are gone from the sessions page's count.
    const sessionsAnswered = await graphql<{ sessions: { totalCount: number } }>(
      'query($from: DateTime!, $to: DateTime!, $u: String) { sessions(filter: { from: $from, to: $to, userId: $u }, first: 1) { totalCount } }',
      { from: seed.from, to: seed.to, u: user },
    );
    let status = '';
    while (status !== 'COMPLETED') {
      await new Promise((resolve) => setTimeout(resolve, 200));
      status = (
        await graphql<{ erasureJob: { status: string } }>('query($id: ID!) { erasureJob(id: $id) { status } }', { id: eraseData.id })
      ).erasureJob.status;
    }
    const completedMs = performance.now() - started;
    const left: Record<string, number> = {};
    for (const table of ERASED_TRACE_TABLES) {
      left[table] = Number(
        (
          await raw(
            `SELECT count() AS n FROM ${table} WHERE tenant_id = {tenantId:String} AND project_id = {projectId:String}
             AND trace_id IN (SELECT trace_id FROM erased_traces WHERE tenant_id = {tenantId:String} AND project_id = {projectId:String} AND job_id = {job:String})`,
            { job: eraseData.id },
          )
        ).n,
      );
    }
    const readsRightAfterMs = await readP50();
    // The minutes the erasure marked are sealed again by the worker's sealer (a pass every 10 s):
    // until then reads share the engine with it. Measured again after a minute and a half.
    await new Promise((resolve) => setTimeout(resolve, 90_000));
    const readsAfterMs = await readP50();
    writeResults({
      erasure: {
        spans: seed.spans,
        user,
        userSpans: before,
        traces: eraseData.traceCount,
        answeredMs: Math.round(answeredMs),
        userSessionsAnsweredAfter: sessionsAnswered.sessions.totalCount,
        completedMs: Math.round(completedMs),
        userSpansStoredAfter: await userSpans(),
        rowsLeftByTable: left,
        readsP50BeforeMs: readsBeforeMs,
        readsP50RightAfterMs: readsRightAfterMs,
        readsP50AfterSealerMs: readsAfterMs,
        readsRightAfterOverBefore: Number((readsRightAfterMs / readsBeforeMs).toFixed(2)),
        readsAfterSealerOverBefore: Number((readsAfterMs / readsBeforeMs).toFixed(2)),
      },
    });
  } finally {
    await infra.shutdown.run();
  }
}

main().catch((error: Error) => {
  process.stderr.write(`bench:erasure failed: ${error.stack ?? error.message}\n`);
  process.exit(1);
});
