import { chmodSync, mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { SpanStatusCode } from '@opentelemetry/api';
import type { ReadableSpan } from '@opentelemetry/sdk-trace';
import {
  SpanRecorder,
  entryPoint,
  exportSpans,
  exportSucceeded,
  freePorts,
  otlpExporter,
  postgresPidsFor,
  queryEmbeddedClickHouse,
  startProcess,
  waitFor,
  type ServerProcess,
} from '../support';

/**
 * A worker killed (SIGKILL) right after the gateway acknowledged a stream of exports, while their
 * batches are being written: after a restart every acknowledged span is stored, and counted, once.
 */
/** Traces of ten spans each, per wave of exports sent at once. */
const TRACES = 300;

describe('a worker killed in the middle of a batch', () => {
  const dataDir = mkdtempSync(path.join(os.tmpdir(), 'spanforge-crash-'));
  chmodSync(dataDir, 0o755);
  let ports: Awaited<ReturnType<typeof freePorts>>;
  let server: ServerProcess | undefined;

  const start = async () => {
    const started = startProcess(entryPoint('all-in-one'), { DATA_DIR: dataDir, HOST: '127.0.0.1', LOG_LEVEL: 'warn', ...ports });
    await waitFor(() => started.stdout().includes('ready in') || started.child.exitCode !== null, 'the ready banner');
    if (started.child.exitCode !== null) throw new Error(`server exited: ${started.stderr()}`);
    return started;
  };

  /** Queue states from /metrics: nothing waiting, nothing held, no job in the worker's hands, three polls in a row. */
  const drained = async () => {
    let quiet = 0;
    await waitFor(
      async () => {
        const text = await (await fetch(`http://127.0.0.1:${ports.API_PORT}/metrics`)).text();
        const value = (name: string) => Number(new RegExp(`^${name} (\\S+)$`, 'm').exec(text)?.[1] ?? NaN);
        // The queue's gauges are polled (a fresh process reads 0 before its first poll): the worker's own count of jobs in hand too.
        const idle =
          value('spanforge_ingest_queue_depth') === 0 &&
          value('spanforge_ingest_queue_active') === 0 &&
          value('spanforge_worker_jobs_active') === 0;
        quiet = idle ? quiet + 1 : 0;
        return quiet >= 3;
      },
      'the ingest queue to drain',
      90_000,
    );
  };

  beforeAll(async () => {
    ports = await freePorts();
  });
  afterAll(async () => {
    if (server && server.child.exitCode === null) {
      server.child.kill('SIGTERM');
      await server.exited;
    }
    for (const pid of await postgresPidsFor(dataDir)) process.kill(pid, 'SIGINT');
    rmSync(dataDir, { recursive: true, force: true });
  });

  it('loses nothing acknowledged and counts nothing twice', async () => {
    server = await start();
    const apiKey = decodeURIComponent(/^OTEL_EXPORTER_OTLP_HEADERS=authorization=(\S+)$/m.exec(server.stdout())![1]!).replace(
      /^Bearer /,
      '',
    );

    const exporter = otlpExporter('http/protobuf', { http: `http://127.0.0.1:${ports.OTLP_HTTP_PORT}`, grpc: '' }, apiKey);
    const base = Date.UTC(2026, 10, 7);
    const sent: ReadableSpan[] = [];
    let traces = 0;
    let expectedInput = 0;
    let expectedErrors = 0;
    /** One wave of TRACES traces of ten spans, sent at once; every export must be acknowledged. */
    const wave = async () => {
      const recorder = new SpanRecorder('crash-agent');
      for (let n = 0; n < TRACES; n++, traces++) {
        const t = traces;
        const root = recorder.span(
          'agent.run',
          { 'session.id': `crash-session-${t % 6}`, 'gen_ai.operation.name': 'invoke_agent' },
          { start: base + t * 10_000, end: base + t * 10_000 + 5_000 },
        );
        for (let i = 0; i < 9; i++) {
          const failed = i === 4 && t % 5 === 0;
          const llm = recorder.span(
            'chat gpt-4o-mini',
            {
              'gen_ai.operation.name': 'chat',
              'gen_ai.request.model': 'gpt-4o-mini',
              'gen_ai.provider.name': 'openai',
              'gen_ai.usage.input_tokens': 100 + i,
              'gen_ai.usage.output_tokens': 10,
            },
            { start: base + t * 10_000 + i * 100, end: base + t * 10_000 + i * 100 + 90 },
            root,
            failed ? { code: SpanStatusCode.ERROR } : undefined,
          );
          recorder.end(llm);
          expectedInput += 100 + i;
          if (failed) expectedErrors++;
        }
        recorder.end(root);
      }
      const spans = recorder.finished();
      const batches: ReadableSpan[][] = [];
      for (let i = 0; i < spans.length; i += 100) batches.push(spans.slice(i, i + 100));
      const results = await Promise.all(batches.map((batch) => exportSpans(exporter, batch)));
      expect(results.map(exportSucceeded)).toEqual(batches.map(() => true));
      sent.push(...spans);
    };
    /** Jobs the worker holds now (a gauge it sets itself, not a poll of the queue). */
    const jobsInHand = async () => {
      const text = await (await fetch(`http://127.0.0.1:${ports.API_PORT}/metrics`)).text();
      return Number(/^spanforge_worker_jobs_active (\S+)$/m.exec(text)?.[1] ?? 0);
    };
    // The kill must land while the worker still holds acknowledged work, or the test proves nothing:
    // waves go out until one is caught in the worker's hands (a fast machine may store a wave
    // before the client reads the last 200), and the kill follows that observation at once.
    let caughtInFlight = false;
    for (let attempt = 0; attempt < 10 && !caughtInFlight; attempt++) {
      await wave();
      caughtInFlight = (await jobsInHand()) > 0;
    }
    expect(caughtInFlight).toBe(true);
    server.child.kill('SIGKILL');
    await exporter.shutdown();
    await server.exited;
    server = await start();
    // The restarted worker has jobs to finish (the kill landed while it held some): it finishes one
    // once their locks lapse. Waiting for that first keeps a fresh process's queue gauges, which
    // read 0 until their first poll, from passing for a drained queue.
    const completedJobs = async () => {
      const metrics = await (await fetch(`http://127.0.0.1:${ports.API_PORT}/metrics`)).text();
      return Number(/^spanforge_worker_jobs_total\{outcome="completed"\} (\S+)$/m.exec(metrics)?.[1] ?? 0);
    };
    await waitFor(async () => (await completedJobs()) > 0, 'the restarted worker to finish the jobs the kill interrupted', 90_000);
    await drained();
    server.child.kill('SIGTERM');
    expect(await server.exited).toBe(0);

    const [stored] = await queryEmbeddedClickHouse<{ spans: string; distinct: string }>(
      dataDir,
      'SELECT count() AS spans, uniqExact(span_id) AS distinct FROM spans FINAL',
    );
    expect(Number(stored!.spans)).toBe(sent.length);
    expect(Number(stored!.distinct)).toBe(sent.length);
    const [totals] = await queryEmbeddedClickHouse<{ input: string; errors: string; traces: string }>(
      dataDir,
      `SELECT sum(input) AS input, sum(errors) AS errors, count() AS traces FROM (
         SELECT trace_id, arraySum((maxMap(usage)).3) AS input, length(groupUniqArrayArray(error_span_ids)) AS errors FROM traces GROUP BY trace_id)`,
    );
    expect(Number(totals!.traces)).toBe(traces);
    expect(Number(totals!.input)).toBe(expectedInput);
    expect(Number(totals!.errors)).toBe(expectedErrors);
    const [accounting] = await queryEmbeddedClickHouse<{ accepted: string }>(
      dataDir,
      "SELECT sum(spans) AS accepted FROM ingest_accounting FINAL WHERE outcome = 'accepted'",
    );
    expect(Number(accounting!.accepted)).toBe(sent.length);
  });
});
