import { graphql } from '../support';
import { startIngestHarness, type IngestHarness } from './ingest-harness';
import { JSON_TYPE, exportResponseOf, postTraces } from './raw-otlp';
import { NS_PER_MS, hex, innocentTrace, jsonExport, jsonSpan, nanosOf } from './otlp-json';

/*
 * One well-formed span with a value the store cannot hold as sent, next to another tenant's
 * ordinary export: the poison span is stored (converted in the documented way) or rejected with a
 * reason in partial_success, the other tenant's spans are stored within seconds, and every query
 * of the poisoned project still answers. Each case was a lost batch before (the worker's insert
 * failed and took every export of the batch with it).
 */

type Project = Awaited<ReturnType<IngestHarness['newProject']>>;

interface PoisonCase {
  name: string;
  /** The poison export's spans. */
  spans: () => Array<Record<string, unknown>>;
  /** Spans rejected in partial_success, with this reason; 0 = all stored. */
  rejected: number;
  reason?: string;
  /** What a user would check of what was stored, through the API. */
  check?: (context: { api: string; project: Project; spans: Array<Record<string, unknown>> }) => Promise<void>;
}

const oneSpan = (
  start: bigint,
  attributes: Parameters<typeof jsonSpan>[0]['attributes'] = {},
  extra: Partial<Parameters<typeof jsonSpan>[0]> = {},
) => [jsonSpan({ start, end: start + 5n * NS_PER_MS, attributes, ...extra })];

const llm = (inputTokens: { intValue: string } | { doubleValue: number }) => ({
  'gen_ai.operation.name': { stringValue: 'chat' },
  'gen_ai.request.model': { stringValue: 'gpt-4o-mini' },
  'gen_ai.usage.input_tokens': inputTokens,
  'gen_ai.usage.output_tokens': { intValue: '7' },
});

async function traceOf(api: string, key: string, traceId: string) {
  const answer = await graphql<{
    trace: {
      inputTokens: number;
      outputTokens: number;
      startTime: string;
      spans: Array<{ name: string; inputTokens: number; attributes: Record<string, unknown> }>;
    } | null;
  }>(
    api,
    'query($id: String!) { trace(traceId: $id) { inputTokens outputTokens startTime spans { name inputTokens attributes } } }',
    { id: traceId },
    key,
  );
  expect(answer.errors).toBeUndefined();
  return answer.data!.trace!;
}

const cases: PoisonCase[] = [
  {
    name: 'a start in 1970 (a device with an unset clock)',
    spans: () => oneSpan(nanosOf('1970-02-10T00:00:00.000Z') + 1n),
    rejected: 0,
    check: async ({ api, project, spans }) => {
      expect((await traceOf(api, project.apiKey, spans[0]!.traceId as string)).startTime).toBe('1970-02-10T00:00:00.000Z');
    },
  },
  {
    name: 'a start one second after the epoch',
    spans: () => oneSpan(1_000_000_000n),
    rejected: 0,
  },
  {
    name: "times from 2262-04-12 on (past DateTime64) and past 2149-06-06 (past the rollups' days)",
    spans: () => [
      ...oneSpan(nanosOf('2262-04-12T00:00:00.000Z')),
      ...oneSpan(nanosOf('2149-06-07T00:00:00.000Z')),
      ...oneSpan(nanosOf('2149-06-06T23:00:00.000Z')),
    ],
    rejected: 2,
    reason: 'timestamp_out_of_range',
  },
  {
    name: 'spans in 150 different months in one export',
    spans: () =>
      Array.from(
        { length: 150 },
        (_, month) =>
          oneSpan(nanosOf(`${2000 + Math.floor(month / 12)}-${String((month % 12) + 1).padStart(2, '0')}-15T12:00:00.000Z`))[0]!,
      ),
    rejected: 0,
    check: async ({ api, project, spans }) => {
      const last = spans[149]!;
      expect((await traceOf(api, project.apiKey, last.traceId as string)).startTime).toBe('2012-06-15T12:00:00.000Z');
    },
  },
  {
    name: 'a fractional token count (input_tokens = 12.25)',
    spans: () => oneSpan(BigInt(Date.now()) * NS_PER_MS, llm({ doubleValue: 12.25 })),
    rejected: 0,
    check: async ({ api, project, spans }) => {
      const trace = await traceOf(api, project.apiKey, spans[0]!.traceId as string);
      expect({ input: trace.inputTokens, output: trace.outputTokens }).toEqual({ input: Math.round(12.25), output: 7 });
    },
  },
  {
    name: 'a token count of 2^63 − 1',
    spans: () => oneSpan(BigInt(Date.now()) * NS_PER_MS, llm({ intValue: '9223372036854775807' })),
    rejected: 0,
    check: async ({ api, project, spans }) => {
      const trace = await traceOf(api, project.apiKey, spans[0]!.traceId as string);
      // Not a count the store can sum: not counted, and kept as sent among the attributes.
      expect({ input: trace.inputTokens, output: trace.outputTokens }).toEqual({ input: 0, output: 7 });
      expect(trace.spans[0]!.attributes['gen_ai.usage.input_tokens']).toBe('9223372036854775807');
    },
  },
  {
    name: 'agent.iterations past a 32-bit integer, and a lone surrogate in a name and an attribute',
    spans: () =>
      oneSpan(
        BigInt(Date.now()) * NS_PER_MS,
        { 'agent.iterations': { intValue: String(2 ** 40) }, 'note\ud800': { stringValue: 'half \udc00 a character' } },
        { name: 'broken \ud83d text' },
      ),
    rejected: 0,
    check: async ({ api, project, spans }) => {
      const trace = await traceOf(api, project.apiKey, spans[0]!.traceId as string);
      expect(trace.spans[0]!.name).toBe('broken \ufffd text');
      expect(trace.spans[0]!.attributes['note\ufffd']).toBe('half \ufffd a character');
    },
  },
  {
    name: 'an event at time 0 and one in 2300',
    spans: () =>
      oneSpan(
        BigInt(Date.now()) * NS_PER_MS,
        {},
        {
          events: [
            { timeUnixNano: '0', name: 'unset' },
            { timeUnixNano: String(nanosOf('2300-01-01T00:00:00.000Z')), name: 'far' },
          ],
        },
      ),
    rejected: 0,
  },
];

const PROJECT_QUERIES = `{
  traces(first: 200) { nodes { traceId costUsd inputTokens durationMs } totalCount }
  sessions(first: 5) { totalCount nodes { sessionId costUsd inputTokens } }
  costBreakdown(groupBy: [MODEL, DAY]) { keys costUsd inputTokens outputTokens spanCount }
  latencyByIterations { iterations traceCount p99Ms }
  spanTypeStats { type spanCount }
  modelStats { model calls inputTokens }
  ingestStats { received accepted rejected }
}`;

describe("one poison span next to another tenant's export", () => {
  let h: IngestHarness;
  let api: string;

  beforeAll(async () => {
    h = await startIngestHarness();
    api = h.api;
  });
  afterAll(() => h?.stop());

  it.each(cases)(
    '$name: stored or rejected with a reason; the other tenant is stored at once; every query answers',
    async ({ spans: make, rejected, reason, check }) => {
      const [poisoned, innocent] = [await h.newProject(), await h.newProject()];
      const spans = make();
      const other = innocentTrace(50);

      const [poisonAnswer, innocentAnswer] = await Promise.all([
        postTraces(h.http, jsonExport(spans), { type: JSON_TYPE, key: poisoned.apiKey }),
        postTraces(h.http, jsonExport(other.spans), { type: JSON_TYPE, key: innocent.apiKey }),
      ]);

      expect([poisonAnswer.status, innocentAnswer.status]).toEqual([200, 200]);
      expect(exportResponseOf(innocentAnswer)).toBeUndefined();
      const partial = exportResponseOf(poisonAnswer);
      if (rejected === 0) expect(partial).toBeUndefined();
      else expect(partial).toEqual({ rejectedSpans: rejected, errorMessage: `${rejected} spans rejected: ${rejected} ${reason}` });

      // The other tenant is not held back: its spans are in within seconds (a worker flush is 100 ms).
      await h.waitForSpans(innocent.projectId, other.spans.length, 10_000);
      const [innocentTokens] = await h.query<{ n: string }>(
        'SELECT sum(input_tokens) AS n FROM spans FINAL WHERE project_id = {p:String}',
        { p: innocent.projectId },
      );
      expect(Number(innocentTokens!.n)).toBe(other.inputTokens);

      // Stored: the spans whose times the store holds (the last day of Date, 2149-06-06, included).
      const storable = spans.filter((span) => BigInt(span.startTimeUnixNano as string) < nanosOf('2149-06-07T00:00:00.000Z'));
      expect(spans.length - storable.length).toBe(rejected);
      await h.waitForSpans(poisoned.projectId, storable.length, 10_000);
      const [count] = await h.query<{ n: string }>('SELECT count() AS n FROM spans FINAL WHERE project_id = {p:String}', {
        p: poisoned.projectId,
      });
      expect(Number(count!.n)).toBe(storable.length);
      // The trace figures follow the spans by one upkeep round.
      const expectedTraces = new Set(storable.map((span) => span.traceId)).size;
      let answer = await graphql(api, PROJECT_QUERIES, {}, poisoned.apiKey);
      for (
        let tries = 0;
        tries < 50 && (answer.data as { traces?: { totalCount: number } } | null)?.traces?.totalCount !== expectedTraces;
        tries++
      ) {
        await new Promise((resolve) => setTimeout(resolve, 200));
        answer = await graphql(api, PROJECT_QUERIES, {}, poisoned.apiKey);
      }
      expect(answer.errors).toBeUndefined();
      expect((answer.data as { traces: { totalCount: number } }).traces.totalCount).toBe(expectedTraces);
      await check?.({ api, project: poisoned, spans });
      const [dead] = await h.query<{ n: string }>('SELECT count() AS n FROM dead_letters FINAL WHERE project_id = {p:String}', {
        p: poisoned.projectId,
      });
      expect(Number(dead!.n)).toBe(0);
    },
  );

  it("keeps the poison span's export and the other tenant's when both share one worker batch with every case at once", async () => {
    const innocent = await h.newProject();
    const others = Array.from({ length: 5 }, () => innocentTrace(20));
    const poisoned = await Promise.all(cases.map(() => h.newProject()));
    const answers = await Promise.all([
      ...cases.map((poison, index) => postTraces(h.http, jsonExport(poison.spans()), { type: JSON_TYPE, key: poisoned[index]!.apiKey })),
      ...others.map((other) => postTraces(h.http, jsonExport(other.spans), { type: JSON_TYPE, key: innocent.apiKey })),
    ]);
    expect(answers.map((a) => a.status)).toEqual(answers.map(() => 200));
    await h.waitForSpans(innocent.projectId, others.length * 20, 10_000);
  });

  it('rejects a span whose trace id is new but whose start is out of range without touching its siblings', async () => {
    const project = await h.newProject();
    const traceId = hex(16);
    const now = BigInt(Date.now()) * NS_PER_MS;
    const spans = [
      jsonSpan({ traceId, start: now, end: now + NS_PER_MS }),
      jsonSpan({ traceId, start: nanosOf('2262-05-01T00:00:00.000Z'), end: nanosOf('2262-05-01T00:00:01.000Z') }),
    ];
    const answer = await postTraces(h.http, jsonExport(spans), { type: JSON_TYPE, key: project.apiKey });
    expect(exportResponseOf(answer)).toEqual({ rejectedSpans: 1, errorMessage: '1 span rejected: 1 timestamp_out_of_range' });
    await h.waitForSpans(project.projectId, 1, 10_000);
  });
});
