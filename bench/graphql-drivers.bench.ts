import 'reflect-metadata';
import { rmSync } from 'node:fs';
import { startBenchStack, temporaryDataDir } from './bench-stack';
import { percentile, progress, writeResults } from './report';
import { seedVolume } from './seed-volume';

const SEQUENTIAL = 300;
const CONCURRENT = 2_000;
const CONCURRENCY = 16;

/**
 * `npm run bench:graphql-drivers`: the same resolvers behind Mercurius and behind Apollo (both on
 * Fastify, in this process, one after the other on the same seeded data directory), measured in one run: latency of a light
 * query, a trace and an aggregate one at a time, and requests/s of the light query 16 at a time.
 */
async function main(): Promise<void> {
  const dataDir = temporaryDataDir('spanforge-drivers-');
  // The seed, by a first stack; each driver's stack then opens the same data directory.
  let infra = await startBenchStack(dataDir);
  try {
    const seed = await seedVolume(infra, 100_000);
    const [traceId] = (
      await (
        await infra.clickhouse.query({
          query: 'SELECT trace_id FROM trace_index WHERE project_id = {p:String} LIMIT 1',
          query_params: { p: seed.projectId },
          format: 'JSONEachRow',
        })
      ).json<{ trace_id: string }>()
    ).map((r) => r.trace_id);
    const queries = {
      light: { query: '{ currentProject { id name } }' },
      trace: {
        query: 'query($id: String!) { trace(traceId: $id) { traceId durationMs costUsd spans { spanId name type durationMs } } }',
        variables: { id: traceId },
      },
      aggregate: {
        query: 'query($f: TraceFilter) { latencyByIterations(filter: $f) { iterations traceCount p50Ms p99Ms } }',
        variables: { f: { from: seed.from, to: seed.to } },
      },
    };
    const results: Record<string, Record<string, number>> = {};
    await infra.shutdown.run();
    for (const driver of ['mercurius', 'apollo'] as const) {
      infra = await startBenchStack(dataDir, {}, { driver });
      const api = await infra.startApi();
      const send = async (body: object) => {
        const response = await fetch(`${api}/graphql`, {
          method: 'POST',
          headers: { 'content-type': 'application/json', authorization: `Bearer ${seed.apiKey}` },
          body: JSON.stringify(body),
        });
        const json = (await response.json()) as { errors?: unknown };
        if (json.errors) throw new Error(`${driver}: ${JSON.stringify(json.errors)}`);
      };
      const row: Record<string, number> = {};
      for (const [name, body] of Object.entries(queries)) {
        for (let i = 0; i < 20; i++) await send(body);
        const samples: number[] = [];
        for (let i = 0; i < SEQUENTIAL; i++) {
          const started = performance.now();
          await send(body);
          samples.push(performance.now() - started);
        }
        row[`${name}P50Ms`] = Number(percentile(samples, 0.5).toFixed(2));
        row[`${name}P99Ms`] = Number(percentile(samples, 0.99).toFixed(2));
      }
      let next = 0;
      const started = performance.now();
      await Promise.all(
        Array.from({ length: CONCURRENCY }, async () => {
          while (next++ < CONCURRENT) await send(queries.light);
        }),
      );
      row.lightRequestsPerSec = Math.round(CONCURRENT / ((performance.now() - started) / 1000));
      results[driver] = row;
      progress(`${driver}: ${JSON.stringify(row)}`);
      await infra.shutdown.run();
    }
    writeResults({ graphqlDrivers: results });
  } finally {
    await infra.shutdown.run();
    rmSync(dataDir, { recursive: true, force: true });
  }
}

main().then(
  () => process.exit(0),
  (error: Error) => {
    process.stderr.write(`bench:graphql-drivers failed: ${error.stack ?? error.message}\n`);
    process.exit(1);
  },
);
