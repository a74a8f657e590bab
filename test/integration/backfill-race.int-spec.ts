import path from 'node:path';
import { randomUUID } from 'node:crypto';
import { projectRoot } from '@spanforge/config';
import { createClickHouseClient, migrateClickHouse, type ClickHouseClient } from '@spanforge/clickhouse';
import { DeadLetterRepository, SpanRepository, SpanWriter, exportRows, type RowChunk } from '@spanforge/ingest';
import { decodeJsonExport } from '@spanforge/otlp';
import { workerDataDir } from '../support';
import { exportJob } from './export-job';
import { NS_PER_MS, hex, jsonExport, jsonSpan } from './otlp-json';

/*
 * Two workers' upkeep rounds writing the same root span again, on real ClickHouse. Each worker is a
 * SpanWriter of its own on the same store, as two worker processes are; the test holds each at a
 * seam (before its round reads the spans to write again, before an insert) to make the
 * interleaving that loses a change when each copy carries only the change its own round looked for.
 *
 * A trace's root is stored plain and without a session. One worker stores a span that gives the
 * trace one of the two changes (its session, or an LLM call that makes the root RUN); its round
 * looks and is held. The other worker stores the span that gives the other change; its round sees
 * both, reads the root, and is held before its copy goes in. Then the first round reads the root
 * and writes its copy: read last, it is the newest and replaces the other. It must carry both
 * changes, though its round's look saw only one: the other span was stored before it read.
 */

const SESSION = 'session-race';

interface Gate {
  /** Settles when the held call arrives. */
  arrived: Promise<void>;
  release(): void;
}

/** A gate on one call: the call waits at it until released. */
function gate(): Gate & { wait(): Promise<void> } {
  let arrive!: () => void;
  let release!: () => void;
  const arrived = new Promise<void>((resolve) => (arrive = resolve));
  const released = new Promise<void>((resolve) => (release = resolve));
  return {
    arrived,
    release,
    wait: async () => {
      arrive();
      await released;
    },
  };
}

/** The real repository, with a seam before the read of spans to write again and before the n-th insert. */
class HeldRepository extends SpanRepository {
  beforeRewrite?: () => Promise<void>;
  beforeInsert = new Map<number, () => Promise<void>>();
  private inserts = 0;

  override async rewrittenSpanLines(...args: Parameters<SpanRepository['rewrittenSpanLines']>) {
    const held = this.beforeRewrite;
    this.beforeRewrite = undefined;
    await held?.();
    return super.rewrittenSpanLines(...args);
  }

  /** Every row line this worker inserted. */
  readonly lines: string[] = [];

  override async insertSpanLines(lines: Uint8Array[]): Promise<void> {
    await this.beforeInsert.get(++this.inserts)?.();
    for (const line of lines) this.lines.push(new TextDecoder().decode(line).trimEnd());
    await super.insertSpanLines(lines);
  }
}

describe("two workers' back-fills of one trace", () => {
  let client: ClickHouseClient;
  const writers: SpanWriter[] = [];

  beforeAll(async () => {
    client = createClickHouseClient({ kind: 'embedded', path: path.join(workerDataDir(), 'clickhouse') });
    await migrateClickHouse(client, path.join(projectRoot(), 'infra', 'clickhouse'));
  });
  afterAll(async () => {
    for (const writer of writers) await writer.close();
    await client?.close();
  });

  const worker = (repository: SpanRepository) => {
    const writer = new SpanWriter(
      repository,
      { maxItems: 10_000, maxDelayMs: 5 },
      {
        deadLetters: new DeadLetterRepository(client),
        erasures: {
          rebuildSessionsWithoutErased: async () => {
            throw new Error('nothing is erased in this test');
          },
          runAgain: async () => {
            throw new Error('nothing is erased in this test');
          },
        },
        log: { warn: () => undefined, error: (message: string) => console.error(message) },
      },
    );
    writers.push(writer);
    return writer;
  };

  const chunkOf = (projectId: string, spans: Array<Record<string, unknown>>): RowChunk => {
    const body = jsonExport(spans, 'race-service');
    return exportRows(exportJob('race-tenant', projectId, 'json', body, decodeJsonExport(body)), []);
  };

  /*
   * `early` is stored first, and its round looks and is held before it reads the root; `late` is
   * stored next, and its round looks (seeing both the session and the call), reads the root, and is
   * held before its copy goes in; then `early`'s round reads the root (the stored one: `late`'s copy
   * is not in yet) and writes its copy, the newest; then `late`'s copy goes in.
   */
  it.each([
    ['RUN', 'the step naming the session', 'the LLM call'],
    ['the session', 'the LLM call', 'the step naming the session'],
  ])("keeps %s on the root when the newest copy's round (%s's) looked before %s was stored", async (_kept, earlyName) => {
    const projectId = `race-${randomUUID()}`;
    const [traceId, rootId] = [hex(16), hex(8)];
    const start = BigInt(Date.now() - 60_000) * NS_PER_MS;
    const span = (name: string, parentSpanId: string | undefined, attributes: Record<string, { stringValue: string }>, spanId?: string) =>
      jsonSpan({ traceId, spanId, parentSpanId, name, start, end: start + 1_000n * NS_PER_MS, attributes });
    const root = span('handle request', undefined, {}, rootId);
    const step = span('plan', rootId, { 'session.id': { stringValue: SESSION } });
    const call = span('chat', rootId, {
      'gen_ai.operation.name': { stringValue: 'chat' },
      'gen_ai.provider.name': { stringValue: 'openai' },
      'gen_ai.request.model': { stringValue: 'gpt-4o-mini' },
    });
    const [early, late] = earlyName === 'the LLM call' ? [call, step] : [step, call];

    const [readsLast, readsFirst] = [new HeldRepository(client), new HeldRepository(client)];
    const [earlyWorker, lateWorker] = [worker(readsLast), worker(readsFirst)];
    // The root alone first: spans of one export share its session.
    await earlyWorker.write(chunkOf(projectId, [root]));

    const earlyReads = gate();
    readsLast.beforeRewrite = earlyReads.wait;
    const earlyDone = earlyWorker.write(chunkOf(projectId, [early]));
    await earlyReads.arrived;

    // The late export's round sees the session, the call and the root without either: its copy has both.
    // It is held before that copy goes in (its worker's second insert).
    const lateInserts = gate();
    readsFirst.beforeInsert.set(2, lateInserts.wait);
    const lateDone = lateWorker.write(chunkOf(projectId, [late]));
    await lateInserts.arrived;

    earlyReads.release();
    await earlyDone;
    lateInserts.release();
    await lateDone;

    const stored = await (
      await client.query({
        query: `SELECT span_id, toString(argMax(span_type, ingested_at)) AS type, argMax(session_id, ingested_at) AS session
                FROM spans WHERE project_id = {p:String} AND trace_id = {t:String} GROUP BY span_id`,
        query_params: { p: projectId, t: traceId },
        format: 'JSONEachRow',
      })
    ).json<{ span_id: string; type: string; session: string }>();
    const byId = new Map(stored.map((r) => [r.span_id, r]));
    // Both workers wrote the root again: the interleaving above happened (counted as inserted: merges
    // of the table keep only the newest copy).
    const rootLines = [...readsLast.lines, ...readsFirst.lines].filter((line) => line.includes(`"span_id":"${rootId}"`));
    expect(rootLines).toHaveLength(3);
    expect(byId.get(rootId)).toMatchObject({ type: 'RUN', session: SESSION });
    expect(stored.map((r) => r.session)).toEqual([SESSION, SESSION, SESSION]);
    // And the figures: the trace in its session, the session counting it once.
    const figures = async (query: string) =>
      (await client.query({ query, query_params: { p: projectId, t: traceId, s: SESSION }, format: 'JSONEachRow' })).json();
    expect(await figures('SELECT session_id FROM trace_figures FINAL WHERE project_id = {p:String} AND trace_id = {t:String}')).toEqual([
      { session_id: SESSION },
    ]);
    expect(
      await figures('SELECT trace_count FROM session_figures FINAL WHERE project_id = {p:String} AND session_id = {s:String}'),
    ).toEqual([{ trace_count: 1 }]);
  });
});
