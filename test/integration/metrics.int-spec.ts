import { SpanMetricsSealer } from '@spanforge/ingest';
import { PriceTable, costOf } from '@spanforge/pricing';
import { graphql } from '../support';
import { startIngestHarness, type IngestHarness } from './ingest-harness';
import { JSON_TYPE, postTraces } from './raw-otlp';
import { NS_PER_MS, hex, jsonExport, jsonSpan, type JsonAnyValue } from './otlp-json';

/*
 * The `metrics` query against figures the test computes from what it sent: spans around the
 * autumn daylight-saving change in Paris (a 25-hour day), a trace crossing local midnight, a
 * wrapper span stating its children's totals, an export sent twice, and feedback scores.
 */

const ZONE = 'Europe/Paris';
const MODEL_A = 'gpt-4o-mini';
const MODEL_B = 'gpt-4o';

interface SentSpan {
  traceId: string;
  name: string;
  model: string;
  startMs: number;
  durationMs: number;
  input: number;
  output: number;
  ttftMs?: number;
  error: boolean;
  /** A wrapper that repeats its children's usage: counted, but no cost or tokens of its own. */
  wrapper: boolean;
}

/** The local date (YYYY-MM-DD) of an instant in the zone, by Intl: the test's own bucketing. */
const localDay = (ms: number) => new Intl.DateTimeFormat('en-CA', { timeZone: ZONE, dateStyle: 'short' }).format(new Date(ms));

/**
 * A percentile as the metrics query defines it: the value at rank ⌊level · (n − 1)⌋ of the sorted
 * values (the answer comes from a DDSketch, within 0.5 % of it).
 */
function quantile(values: number[], level: number): number | null {
  if (values.length === 0) return null;
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(level * (sorted.length - 1))]!;
}

/** Within the sketch's accuracy, with room to spare: 1 %. */
function expectPercentile(got: number | null | undefined, want: number | null): void {
  if (want === null) return expect(got).toBeNull();
  expect(Math.abs(got! - want)).toBeLessThanOrEqual(want * 0.01);
}

const price = (model: string, atMs: number) => PriceTable.bundled().lookup(model, 'openai', atMs)!;
const costOfSpan = (span: SentSpan) =>
  span.wrapper || span.model === ''
    ? 0
    : costOf(
        { inputUncached: span.input, cacheRead: 0, cacheWrite: 0, output: span.output, reasoning: 0 },
        price(span.model, span.startMs),
      );

interface Answer {
  granularity: string | null;
  series: Array<{ keys: string[]; points: Array<{ time: string | null; values: Array<number | null> }> }>;
}

describe('metrics', () => {
  let h: IngestHarness;
  let api: string;
  let project: Awaited<ReturnType<IngestHarness['newProject']>>;
  const sent: SentSpan[] = [];
  const traces = new Map<string, { startMs: number; endMs: number; error: boolean }>();

  /** `metrics` as the project's key (or another project's) asks it. */
  const metrics = async (query: Record<string, unknown>, key = project.apiKey): Promise<Answer> => {
    const answer = await graphql<{ metrics: Answer }>(
      api,
      'query($q: MetricsQuery!) { metrics(query: $q) { granularity series { keys points { time values } } } }',
      { q: query },
      key,
    );
    expect(answer.errors).toBeUndefined();
    return answer.data!.metrics;
  };

  function llmAttributes(span: SentSpan): Record<string, JsonAnyValue> {
    const usage = {
      'gen_ai.usage.input_tokens': { intValue: String(span.input) },
      'gen_ai.usage.output_tokens': { intValue: String(span.output) },
    };
    if (span.wrapper)
      return {
        'ai.operationId': { stringValue: 'ai.generateText' },
        'ai.model.id': { stringValue: span.model },
        'ai.model.provider': { stringValue: 'openai.chat' },
        'ai.usage.promptTokens': { intValue: String(span.input) },
        'ai.usage.completionTokens': { intValue: String(span.output) },
        ...(span.ttftMs !== undefined ? { 'ai.response.msToFirstChunk': { doubleValue: span.ttftMs } } : {}),
      };
    return {
      'gen_ai.operation.name': { stringValue: 'chat' },
      'gen_ai.provider.name': { stringValue: 'openai' },
      'gen_ai.request.model': { stringValue: span.model },
      'gen_ai.response.model': { stringValue: span.model },
      ...usage,
      ...(span.ttftMs !== undefined ? { 'gen_ai.response.time_to_first_chunk': { doubleValue: span.ttftMs / 1000 } } : {}),
    };
  }

  /** One trace: a root and LLM calls at offsets from its start; returns its export. */
  function trace(
    startIso: string,
    calls: Array<Omit<SentSpan, 'traceId' | 'name' | 'startMs' | 'wrapper'> & { offsetMs: number }>,
    wrapper?: { model: string },
  ) {
    const traceId = hex(16);
    const rootId = hex(8);
    const start = Date.parse(startIso);
    const end = Math.max(...calls.map((c) => c.offsetMs + c.durationMs)) + 10;
    const spans = [
      jsonSpan({ traceId, spanId: rootId, name: 'agent.run', start: BigInt(start) * NS_PER_MS, end: BigInt(start + end) * NS_PER_MS }),
    ];
    sent.push({
      traceId,
      name: 'agent.run',
      model: '',
      startMs: start,
      durationMs: end,
      input: 0,
      output: 0,
      error: false,
      wrapper: false,
    });
    let parent = rootId;
    if (wrapper) {
      // A Vercel-style wrapper around the calls, stating their summed usage.
      const wrapperSpan: SentSpan = {
        traceId,
        name: 'ai.generateText',
        model: wrapper.model,
        startMs: start + 1,
        durationMs: end - 5,
        input: calls.reduce((n, c) => n + c.input, 0),
        output: calls.reduce((n, c) => n + c.output, 0),
        // It states a time to first chunk, lower than any call's (so a median that took it would move):
        // a wrapper's TTFT repeats its calls', like its usage, and is left out.
        ttftMs: 50,
        error: false,
        wrapper: true,
      };
      parent = hex(8);
      spans.push(
        jsonSpan({
          traceId,
          spanId: parent,
          parentSpanId: rootId,
          name: wrapperSpan.name,
          start: BigInt(wrapperSpan.startMs) * NS_PER_MS,
          end: BigInt(wrapperSpan.startMs + wrapperSpan.durationMs) * NS_PER_MS,
          attributes: llmAttributes(wrapperSpan),
        }),
      );
      sent.push(wrapperSpan);
    }
    for (const call of calls) {
      const span: SentSpan = { ...call, traceId, name: `chat ${call.model}`, startMs: start + call.offsetMs, wrapper: false };
      const json = jsonSpan({
        traceId,
        parentSpanId: parent,
        name: span.name,
        start: BigInt(span.startMs) * NS_PER_MS,
        end: BigInt(span.startMs + span.durationMs) * NS_PER_MS,
        attributes: llmAttributes(span),
      });
      if (span.error) json.status = { code: 2, message: 'rate limited' };
      spans.push(json);
      sent.push(span);
    }
    traces.set(traceId, { startMs: start, endMs: start + end, error: calls.some((c) => c.error) });
    return spans;
  }

  beforeAll(async () => {
    // The worker's own sealer stays out of the way: the test seals when it means to.
    h = await startIngestHarness({ METRICS_SEAL_INTERVAL_MS: '3600000' });
    api = h.api;
    project = await h.newProject('metrics');
    // Paris is at +02 until 2026-10-25 03:00 local, then +01: Oct 25 lasts 25 hours.
    const crossing = trace(
      '2026-10-24T21:30:00Z',
      [
        // 23:40 local on the 24th.
        { model: MODEL_A, offsetMs: 10 * 60_000, durationMs: 1_200, input: 1_000, output: 100, ttftMs: 300, error: false },
        // 00:10 local on the 25th: the trace started on the 24th, this span is on the 25th.
        { model: MODEL_A, offsetMs: 40 * 60_000, durationMs: 2_400, input: 2_000, output: 50, ttftMs: 500, error: false },
        { model: MODEL_B, offsetMs: 41 * 60_000, durationMs: 3_000, input: 500, output: 500, error: true },
      ],
      { model: MODEL_A },
    );
    const lateOnLongDay = trace('2026-10-25T22:30:00Z', [
      // 23:30 local on the 25th (+01): still the 25th, the 25-hour day.
      { model: MODEL_B, offsetMs: 0, durationMs: 800, input: 300, output: 30, error: false },
      { model: MODEL_A, offsetMs: 1_000, durationMs: 900, input: 400, output: 40, ttftMs: 200, error: false },
    ]);
    const body = jsonExport([...crossing, ...lateOnLongDay], 'metrics-service');
    // At-least-once: the same export twice changes no figure.
    for (let i = 0; i < 2; i++) expect((await postTraces(h.http, body, { type: JSON_TYPE, key: project.apiKey })).status).toBe(200);
    await h.waitForSpans(project.projectId, sent.length);
    // The trace figures are kept up by the worker's upkeep after the insert.
    const deadline = Date.now() + 30_000;
    for (;;) {
      const [row] = await h.query<{ n: string }>('SELECT count() AS n FROM trace_figures FINAL WHERE project_id = {p:String}', {
        p: project.projectId,
      });
      if (Number(row?.n) >= traces.size || Date.now() > deadline) break;
      await new Promise((r) => setTimeout(r, 100));
    }
    // …and the trace-metrics hours right after them, in the same round.
    for (;;) {
      const [row] = await h.query<{ n: string }>(
        `SELECT sum(traces) AS n FROM trace_metrics_hour WHERE project_id = {p:String}
           AND (hour, computed_at) IN (SELECT hour, max(computed_at) FROM trace_metrics_hour WHERE project_id = {p:String} GROUP BY hour)`,
        { p: project.projectId },
      );
      if (Number(row?.n) >= traces.size || Date.now() > deadline) break;
      await new Promise((r) => setTimeout(r, 100));
    }
  });
  afterAll(() => h?.stop());

  const RANGE = { from: '2026-10-23T22:00:00Z', to: '2026-10-26T23:00:00Z' }; // Oct 24 to Oct 26 local, whole days

  it.each(['read from the span facts', 'sealed into the minute rollup'])(
    'splits spans by model per local day across the 25-hour day, counting a re-sent export once and a wrapper’s totals never (%s)',
    async (phase) => {
      if (phase === 'sealed into the minute rollup') {
        // The worker's sealer waits METRICS_SEAL_AFTER_SECONDS; here one pass is run at once.
        const sealed = await new SpanMetricsSealer(h.services.clickhouse, h.services.log, {
          afterSeconds: 0,
          intervalMs: 60_000,
        }).sealDue();
        expect(sealed).toBeGreaterThan(0);
        const [row] = await h.query<{ n: string }>('SELECT count() AS n FROM span_metrics_minute WHERE project_id = {p:String}', {
          p: project.projectId,
        });
        expect(Number(row!.n)).toBeGreaterThan(0);
      }
      const answer = await metrics({
        view: 'SPANS',
        measures: ['COUNT', 'COST_USD', 'INPUT_TOKENS', 'DURATION_P95_MS', 'TTFT_P50_MS', 'ERROR_COUNT'],
        groupBy: ['MODEL'],
        granularity: 'DAY',
        timezone: ZONE,
        ...RANGE,
      });
      expect(answer.granularity).toBe('DAY');
      const days = ['2026-10-24', '2026-10-25', '2026-10-26'];
      // Local midnights: +02 before the change, +01 after.
      const starts = ['2026-10-23T22:00:00.000Z', '2026-10-24T22:00:00.000Z', '2026-10-25T23:00:00.000Z'];
      const models = [...new Set(sent.map((s) => s.model))];
      const expected = models.map((model) => {
        const mine = sent.filter((s) => s.model === model);
        return {
          keys: [model],
          points: days.map((day, i) => {
            const spans = mine.filter((s) => localDay(s.startMs) === day);
            // A wrapper's stated TTFT repeats its call's: left out, as its usage is.
            const ttfts = spans.flatMap((s) => (s.ttftMs === undefined || s.wrapper ? [] : [s.ttftMs]));
            return {
              time: starts[i],
              values: [
                spans.length,
                spans.reduce((n, s) => n + costOfSpan(s), 0),
                spans.reduce((n, s) => n + (s.wrapper ? 0 : s.input), 0),
                quantile(
                  spans.map((s) => s.durationMs),
                  0.95,
                ),
                quantile(ttfts, 0.5),
                spans.filter((s) => s.error).length,
              ],
            };
          }),
        };
      });
      // Series are the largest first by COUNT over the range.
      const byCount = (keys: string[]) => sent.filter((s) => s.model === keys[0]).length;
      expect(answer.series.map((s) => s.keys)).toStrictEqual(
        expected.map((s) => s.keys).sort((a, b) => byCount(b) - byCount(a) || a[0]!.localeCompare(b[0]!)),
      );
      for (const series of expected) {
        const got = answer.series.find((s) => s.keys[0] === series.keys[0])!;
        expect(got.points.map((p) => p.time)).toStrictEqual(series.points.map((p) => p.time));
        got.points.forEach((point, i) => {
          const want = series.points[i]!.values;
          point.values.forEach((value, j) => {
            if (want[j] === null) expect(value).toBeNull();
            // Percentiles (duration, TTFT) come from sketches: within 1 % of the exact value.
            else if (j === 3 || j === 4) expectPercentile(value, want[j]!);
            else expect(value).toBeCloseTo(want[j]!, 9);
          });
        });
      }
      // The wrapper counts as a span but its stated totals are not costs: the day's cost is the calls'.
      expect(sent.some((s) => s.wrapper && s.input > 0)).toBe(true);
    },
  );

  it('answers by span name from the hour rollup that keeps names, and without names from the one that does not, alike', async () => {
    // The sealed phase above merged the past hours: both hour rollups hold them.
    for (const table of ['span_metrics_hour', 'span_metrics_hour_coarse']) {
      const [row] = await h.query<{ n: string }>(`SELECT count() AS n FROM ${table} WHERE project_id = {p:String}`, {
        p: project.projectId,
      });
      expect({ table, rows: Number(row!.n) > 0 }).toEqual({ table, rows: true });
    }
    const days = ['2026-10-24', '2026-10-25', '2026-10-26'];
    const byName = await metrics({
      view: 'SPANS',
      measures: ['COUNT', 'DURATION_P95_MS'],
      groupBy: ['NAME'],
      granularity: 'DAY',
      timezone: ZONE,
      ...RANGE,
    });
    const names = [...new Set(sent.map((s) => s.name))];
    expect(byName.series.map((s) => s.keys[0]).sort()).toStrictEqual([...names].sort());
    /** A point's COUNT and DURATION_P95_MS against the sent spans of its day that `mine` picks. */
    const expectDays = (points: Answer['series'][number]['points'], mine: (s: SentSpan) => boolean) =>
      points.forEach((point, i) => {
        const spans = sent.filter((s) => mine(s) && localDay(s.startMs) === days[i]);
        expect(point.values[0]).toBe(spans.length);
        expectPercentile(
          point.values[1],
          quantile(
            spans.map((s) => s.durationMs),
            0.95,
          ),
        );
      });
    for (const series of byName.series) expectDays(series.points, (s) => s.name === series.keys[0]);
    const all = await metrics({ view: 'SPANS', measures: ['COUNT', 'DURATION_P95_MS'], granularity: 'DAY', timezone: ZONE, ...RANGE });
    expectDays(all.series[0]!.points, () => true);
  });

  it('puts each trace in the local day it starts, with its wall time, errors and cost', async () => {
    const answer = await metrics({
      view: 'TRACES',
      measures: ['COUNT', 'ERROR_RATE', 'DURATION_P99_MS', 'COST_USD'],
      granularity: 'DAY',
      timezone: ZONE,
      ...RANGE,
    });
    const [series] = answer.series;
    expect(series!.keys).toStrictEqual([]);
    const days = ['2026-10-24', '2026-10-25', '2026-10-26'];
    series!.points.forEach((point, i) => {
      const mine = [...traces.entries()].filter(([, t]) => localDay(t.startMs) === days[i]);
      const cost = sent.filter((s) => mine.some(([id]) => id === s.traceId)).reduce((n, s) => n + costOfSpan(s), 0);
      expect(point.values[0]).toBe(mine.length);
      if (mine.length === 0) {
        expect(point.values.slice(1, 3)).toStrictEqual([null, null]);
        expect(point.values[3]).toBe(0);
        return;
      }
      expect(point.values[1]).toBeCloseTo(mine.filter(([, t]) => t.error).length / mine.length, 9);
      expectPercentile(
        point.values[2],
        quantile(
          mine.map(([, t]) => t.endMs - t.startMs),
          0.99,
        ),
      );
      expect(point.values[3]).toBeCloseTo(cost, 9);
    });
  });

  it('keeps the top series by the first measure, and answers one point per series without a time axis', async () => {
    const answer = await metrics({ view: 'SPANS', measures: ['COUNT'], groupBy: ['NAME'], limit: 1, ...RANGE });
    const counts = new Map<string, number>();
    for (const span of sent) counts.set(span.name, (counts.get(span.name) ?? 0) + 1);
    const [topName, topCount] = [...counts.entries()].sort((a, b) => b[1] - a[1] || a[0].localeCompare(b[0]))[0]!;
    expect(answer).toStrictEqual({ granularity: null, series: [{ keys: [topName], points: [{ time: null, values: [topCount] }] }] });
  });

  it('averages feedback scores per name and hour, with 0 and null where none came', async () => {
    const [traceId] = [...traces.keys()];
    const scores = [
      { name: 'helpful', value: 4 },
      { name: 'helpful', value: 1 },
      { name: 'thumbs', value: true },
      { name: 'thumbs', value: false },
      { name: 'thumbs', value: true },
    ];
    for (const [i, score] of scores.entries()) {
      const response = await fetch(`${api}/v1/feedback`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', authorization: `Bearer ${project.apiKey}` },
        body: JSON.stringify({ traceId, id: `score-${i}`, ...score }),
      });
      expect(response.status).toBe(202);
    }
    const now = Date.now();
    const hour = Math.floor(now / 3_600_000) * 3_600_000;
    const deadline = Date.now() + 10_000;
    let answer: Answer;
    do {
      answer = await metrics({
        view: 'FEEDBACK',
        measures: ['COUNT', 'SCORE_AVG'],
        groupBy: ['SCORE_NAME'],
        granularity: 'HOUR',
        from: new Date(hour - 3_600_000).toISOString(),
        to: new Date(hour + 3_600_000).toISOString(),
      });
    } while (
      answer.series.reduce((n, s) => n + s.points.reduce((m, p) => m + (p.values[0] ?? 0), 0), 0) < scores.length &&
      Date.now() < deadline
    );
    const expected = ['thumbs', 'helpful'].map((name) => {
      const mine = scores.filter((s) => s.name === name).map((s) => Number(s.value));
      return {
        keys: [name],
        points: [
          { time: new Date(hour - 3_600_000).toISOString(), values: [0, null] },
          { time: new Date(hour).toISOString(), values: [mine.length, mine.reduce((a, b) => a + b, 0) / mine.length] },
        ],
      };
    });
    expect(answer!.series).toStrictEqual(expected);
  });

  it('files a trace under the hour it starts, also when a late span moves its start an hour earlier', async () => {
    const own = await h.newProject();
    const ask = (query: Record<string, unknown>) => metrics(query, own.apiKey);
    const traceId = hex(16);
    const rootId = hex(8);
    const at = (iso: string) => BigInt(Date.parse(iso)) * NS_PER_MS;
    const send = async (span: Record<string, unknown>) =>
      expect((await postTraces(h.http, jsonExport([span], 'late-service'), { type: JSON_TYPE, key: own.apiKey })).status).toBe(200);
    /** The traces of each hour of 09:00–12:00 as the rollup has them, once they are `expected` (or after 15 s). */
    const rollupHours = async (expected: number[]): Promise<number[]> => {
      const deadline = Date.now() + 15_000;
      for (;;) {
        const rows = await h.query<{ hour: string; n: string }>(
          `SELECT toString(hour) AS hour, sum(traces) AS n FROM trace_metrics_hour WHERE project_id = {p:String}
             AND (hour, computed_at) IN (SELECT hour, max(computed_at) FROM trace_metrics_hour WHERE project_id = {p:String} GROUP BY hour)
           GROUP BY hour`,
          { p: own.projectId },
        );
        const byHour = ['09', '10', '11'].map((hh) => Number(rows.find((r) => r.hour === `2026-11-03 ${hh}:00:00`)?.n ?? 0));
        if (JSON.stringify(byHour) === JSON.stringify(expected) || Date.now() > deadline) return byHour;
        await new Promise((r) => setTimeout(r, 100));
      }
    };
    const hourly = (extra: Record<string, unknown> = {}) =>
      ask({
        view: 'TRACES',
        measures: ['COUNT', 'DURATION_P50_MS'],
        granularity: 'HOUR',
        from: '2026-11-03T09:00:00Z',
        to: '2026-11-03T12:00:00Z',
        ...extra,
      });
    const expectHours = (answer: Answer, counts: number[], durationMs: number) => {
      expect(answer.series).toHaveLength(1);
      const points = answer.series[0]!.points;
      expect(points.map((p) => p.values[0])).toStrictEqual(counts);
      for (const [i, count] of counts.entries()) {
        if (count === 0) expect(points[i]!.values[1]).toBeNull();
        else expectPercentile(points[i]!.values[1], durationMs);
      }
    };

    await send(
      jsonSpan({ traceId, spanId: rootId, name: 'agent.run', start: at('2026-11-03T10:20:00Z'), end: at('2026-11-03T10:40:00Z') }),
    );
    const beforeMs = 20 * 60_000;
    expect(await rollupHours([0, 1, 0])).toStrictEqual([0, 1, 0]);
    // From the hour rollup (a range alone), and from the traces themselves (a filter), alike.
    expectHours(await hourly(), [0, 1, 0], beforeMs);
    expectHours(await hourly({ filter: { rootName: 'agent.run' } }), [0, 1, 0], beforeMs);

    // A late child that started at 09:50: the trace now starts in the hour before, and leaves 10:00.
    await send(
      jsonSpan({
        traceId,
        parentSpanId: rootId,
        name: 'tool.call',
        start: at('2026-11-03T09:50:00Z'),
        end: at('2026-11-03T10:05:00Z'),
      }),
    );
    expect(await rollupHours([1, 0, 0])).toStrictEqual([1, 0, 0]);
    const afterMs = 50 * 60_000;
    expectHours(await hourly(), [1, 0, 0], afterMs);
    expectHours(await hourly({ filter: { rootName: 'agent.run' } }), [1, 0, 0], afterMs);
    // A range of part hours: the whole hour from the rollup, the ends from the traces.
    const parts = await hourly({ from: '2026-11-03T09:30:00Z', to: '2026-11-03T11:30:00Z' });
    expectHours(parts, [1, 0, 0], afterMs);
    // A range from after its start does not hold it.
    const after = await hourly({ from: '2026-11-03T09:55:00Z', to: '2026-11-03T11:30:00Z' });
    expect(after.series.flatMap((s) => s.points.map((p) => p.values[0]))).toEqual(expect.not.arrayContaining([1]));
  });

  it('counts a trace once in daily costs and trace metrics when a late root moves its start a minute earlier', async () => {
    const own = await h.newProject();
    const at = (iso: string) => BigInt(Date.parse(iso)) * NS_PER_MS;
    const send = async (spans: Array<Record<string, unknown>>) =>
      expect((await postTraces(h.http, jsonExport(spans, 'minute-service'), { type: JSON_TYPE, key: own.apiKey })).status).toBe(200);
    const call = (traceId: string, parentSpanId: string, model: string, startIso: string, input: number, output: number) => {
      const span: SentSpan = {
        traceId,
        name: 'chat',
        model,
        startMs: Date.parse(startIso),
        durationMs: 20_000,
        input,
        output,
        error: false,
        wrapper: false,
      };
      const json = jsonSpan({
        traceId,
        parentSpanId,
        name: 'chat',
        start: at(startIso),
        end: BigInt(span.startMs + span.durationMs) * NS_PER_MS,
        attributes: llmAttributes(span),
      });
      return { span, json };
    };
    // Trace M: its call (10:20:30) comes first, its root (from 10:19:40) later: the trace leaves
    // minute 10:20 for 10:19. Trace S starts in 10:20 and stays there.
    const [moving, movingRoot, staying, stayingRoot] = [hex(16), hex(8), hex(16), hex(8)];
    const movingCall = call(moving, movingRoot, MODEL_A, '2026-11-04T10:20:30Z', 1_000, 200);
    const stayingCall = call(staying, stayingRoot, MODEL_B, '2026-11-04T10:20:10Z', 3_000, 400);
    await send([
      movingCall.json,
      jsonSpan({
        traceId: staying,
        spanId: stayingRoot,
        name: 'agent.run',
        start: at('2026-11-04T10:20:05Z'),
        end: at('2026-11-04T10:20:40Z'),
      }),
      stayingCall.json,
    ]);
    const costsIn = async (from: string, to: string) =>
      (
        await graphql<{ costBreakdown: Array<{ keys: string[]; costUsd: number; spanCount: number }> }>(
          api,
          'query($f: TraceFilter) { costBreakdown(groupBy: [MODEL], filter: $f) { keys costUsd spanCount } }',
          { f: { from, to } },
          own.apiKey,
        )
      ).data?.costBreakdown ?? [];
    const costsOfDay = () => costsIn('2026-11-04T00:00:00Z', '2026-11-05T00:00:00Z');
    // The root only once the first export's figures are kept up (filed under 10:20), so that it moves the trace.
    const firstRound = Date.now() + 15_000;
    while (!(await costsOfDay()).some((row) => row.keys[0] === MODEL_A) && Date.now() < firstRound)
      await new Promise((r) => setTimeout(r, 50));
    await send([
      jsonSpan({
        traceId: moving,
        spanId: movingRoot,
        name: 'agent.run',
        start: at('2026-11-04T10:19:40Z'),
        end: at('2026-11-04T10:21:00Z'),
      }),
    ]);

    // Each call once, and the two roots (no model, no cost) once each.
    const expectedCosts = [
      ...[movingCall.span, stayingCall.span]
        .map((s) => ({ keys: [s.model], costUsd: costOfSpan(s), spanCount: 1 }))
        .sort((a, b) => b.costUsd - a.costUsd),
      { keys: [''], costUsd: 0, spanCount: 2 },
    ];
    const traceHour = {
      view: 'TRACES',
      measures: ['COUNT', 'COST_USD', 'DURATION_P50_MS'],
      granularity: 'HOUR',
      from: '2026-11-04T10:00:00Z',
      to: '2026-11-04T11:00:00Z',
    };
    const durations = [80_000, 35_000];
    let costs: Array<{ keys: string[]; costUsd: number; spanCount: number }> = [];
    let hour: Answer | undefined;
    // The upkeep runs after the second export's insert: wait until the figures hold the root.
    const deadline = Date.now() + 15_000;
    do {
      costs = await costsOfDay();
      hour = await metrics(traceHour, own.apiKey);
      const p50 = hour.series[0]?.points[0]?.values[2];
      if (typeof p50 === 'number' && Math.abs(p50 - quantile(durations, 0.5)!) <= quantile(durations, 0.5)! * 0.01) break;
      await new Promise((r) => setTimeout(r, 100));
    } while (Date.now() < deadline);

    // Each call's cost once: the moved trace is counted under its new minute only.
    expect(costs.map((c) => c.keys)).toStrictEqual(expectedCosts.map((c) => c.keys));
    for (const [i, row] of costs.entries()) {
      expect(row.spanCount).toBe(expectedCosts[i]!.spanCount);
      expect(row.costUsd).toBeCloseTo(expectedCosts[i]!.costUsd, 9);
    }
    const [count, cost, p50] = hour!.series[0]!.points[0]!.values;
    expect(count).toBe(2);
    expect(cost).toBeCloseTo(
      expectedCosts.reduce((n, c) => n + c.costUsd, 0),
      9,
    );
    expectPercentile(p50, quantile(durations, 0.5));
    // The minute rollups as stored: the moved trace in 10:19, the other in 10:20 (each a root and a call), nothing twice.
    const minutes = await h.query<{ minute: string; traces: string; spans: string }>(
      `SELECT toString(t.minute) AS minute, t.traces AS traces, c.spans AS spans
       FROM (SELECT minute, sum(traces) AS traces FROM trace_metrics_minute FINAL WHERE project_id = {p:String} GROUP BY minute) AS t
       LEFT JOIN (SELECT minute, sum(spans) AS spans FROM cost_minute FINAL WHERE project_id = {p:String} GROUP BY minute) AS c ON c.minute = t.minute
       ORDER BY minute`,
      { p: own.projectId },
    );
    expect(minutes.map((m) => [m.minute, Number(m.traces), Number(m.spans)])).toStrictEqual([
      ['2026-11-04 10:19:00', 1, 2],
      ['2026-11-04 10:20:00', 1, 2],
    ]);
    // Ranges that cut minutes: their part minutes by each trace's own start (M 10:19:40, S 10:20:05), whole minutes from the minute rows.
    const calls = (rows: Array<{ keys: string[]; costUsd: number }>) =>
      rows
        .filter((r) => r.keys[0] !== '')
        .map((r) => [r.keys[0], Number(r.costUsd.toFixed(9))])
        .sort();
    const priced = (...spans: SentSpan[]) => spans.map((s) => [s.model, Number(costOfSpan(s).toFixed(9))]).sort();
    expect(calls(await costsIn('2026-11-04T10:19:45Z', '2026-11-04T10:20:20Z'))).toStrictEqual(priced(stayingCall.span));
    expect(calls(await costsIn('2026-11-04T10:19:30Z', '2026-11-04T10:20:00Z'))).toStrictEqual(priced(movingCall.span));
    expect(calls(await costsIn('2026-11-04T10:19:30Z', '2026-11-04T10:21:00Z'))).toStrictEqual(priced(movingCall.span, stayingCall.span));
    expect(calls(await costsIn('2026-11-04T10:19:41Z', '2026-11-04T10:20:05Z'))).toStrictEqual([]);

    // Trace lists over a range read the minutes it covers: the moved trace once, under its new start.
    const listed = async (from: string, to: string) => {
      const answer = await graphql<{
        traces: { totalCount: number; nodes: Array<{ traceId: string; startTime: string; durationMs: number }> };
        latencyByIterations: Array<{ traceCount: number }>;
        costBreakdown: Array<{ keys: string[]; costUsd: number }>;
      }>(
        api,
        `
          query ($f: TraceFilter, $roots: TraceFilter) {
            traces(filter: $f, first: 10) {
              totalCount
              nodes {
                traceId
                startTime
                durationMs
              }
            }
            latencyByIterations(filter: $f) {
              traceCount
            }
            costBreakdown(groupBy: [MODEL], filter: $roots) {
              keys
              costUsd
            }
          }
        `,
        // A filter beyond the range: the breakdown adds up the traces' own cost rows, not the daily rollup.
        { f: { from, to }, roots: { from, to, rootName: 'agent.run' } },
        own.apiKey,
      );
      expect(answer.errors).toBeUndefined();
      const { traces, latencyByIterations, costBreakdown } = answer.data!;
      return {
        traces: traces.nodes.map((n) => [n.traceId, Date.parse(n.startTime), n.durationMs]),
        total: traces.totalCount,
        timed: latencyByIterations.reduce((n, row) => n + row.traceCount, 0),
        costs: calls(costBreakdown),
      };
    };
    expect(await listed('2026-11-04T10:19:00Z', '2026-11-04T10:21:00Z')).toStrictEqual({
      traces: [
        [staying, Date.parse('2026-11-04T10:20:05Z'), durations[1]],
        [moving, Date.parse('2026-11-04T10:19:40Z'), durations[0]],
      ],
      total: 2,
      timed: 2,
      costs: priced(movingCall.span, stayingCall.span),
    });
    expect(await listed('2026-11-04T10:20:00Z', '2026-11-04T10:21:00Z')).toStrictEqual({
      traces: [[staying, Date.parse('2026-11-04T10:20:05Z'), durations[1]]],
      total: 1,
      timed: 1,
      costs: priced(stayingCall.span),
    });
  });

  it('lists a session over a range by its last activity, with its newest figures, as it grows across minutes', async () => {
    const own = await h.newProject();
    const at = (iso: string) => BigInt(Date.parse(iso)) * NS_PER_MS;
    const send = async (spans: Array<Record<string, unknown>>) =>
      expect((await postTraces(h.http, jsonExport(spans, 'session-service'), { type: JSON_TYPE, key: own.apiKey })).status).toBe(200);
    // One LLM call as a root, in a session: the trace's cost is the call's.
    const turn = (session: string, startIso: string, endIso: string, input: number) => {
      const span: SentSpan = {
        traceId: hex(16),
        name: 'chat',
        model: MODEL_A,
        startMs: Date.parse(startIso),
        durationMs: Date.parse(endIso) - Date.parse(startIso),
        input,
        output: 100,
        error: false,
        wrapper: false,
      };
      const json = jsonSpan({
        traceId: span.traceId,
        name: 'chat',
        start: at(startIso),
        end: at(endIso),
        attributes: { ...llmAttributes(span), 'session.id': { stringValue: session } },
      });
      return { span, json };
    };
    type Listed = { sessionId: string; traceCount: number; costUsd: number; lastSeen: string };
    const listed = async (from?: string, to?: string) => {
      const answer = await graphql<{ sessions: { totalCount: number; nodes: Listed[] } }>(
        api,
        'query($f: SessionFilter) { sessions(filter: $f, first: 10) { totalCount nodes { sessionId traceCount costUsd lastSeen } } }',
        { f: { from, to } },
        own.apiKey,
      );
      expect(answer.errors).toBeUndefined();
      const { totalCount, nodes } = answer.data!.sessions;
      return { totalCount, nodes: nodes.map((n) => [n.sessionId, n.traceCount, Number(n.costUsd.toFixed(9)), Date.parse(n.lastSeen)]) };
    };
    const until = async (done: (answer: Awaited<ReturnType<typeof listed>>) => boolean) => {
      const deadline = Date.now() + 15_000;
      let answer = await listed();
      while (!done(answer) && Date.now() < deadline) {
        await new Promise((r) => setTimeout(r, 50));
        answer = await listed();
      }
      return answer;
    };
    // Session S: a turn at 10:00:10–10:00:20, then (once that is stored) one at 10:05:10–10:05:30.
    // Session Q: one turn at 10:01:00–10:01:10.
    const first = turn('S', '2026-11-05T10:00:10Z', '2026-11-05T10:00:20Z', 1_000);
    const other = turn('Q', '2026-11-05T10:01:00Z', '2026-11-05T10:01:10Z', 500);
    await send([first.json, other.json]);
    await until((answer) => answer.totalCount === 2);
    const second = turn('S', '2026-11-05T10:05:10Z', '2026-11-05T10:05:30Z', 3_000);
    await send([second.json]);
    const cost = (...turns: Array<{ span: SentSpan }>) => Number(turns.reduce((n, t) => n + costOfSpan(t.span), 0).toFixed(9));
    const s = ['S', 2, cost(first, second), Date.parse('2026-11-05T10:05:30Z')];
    const q = ['Q', 1, cost(other), Date.parse('2026-11-05T10:01:10Z')];
    const bySpend = (...rows: unknown[][]) => ({
      totalCount: rows.length,
      nodes: rows.sort((a, b) => (b[2] as number) - (a[2] as number)),
    });
    expect(await until((answer) => answer.nodes.some((n) => n[1] === 2))).toStrictEqual(bySpend(s, q));

    // S's first computation stays filed under 10:00, its newest under 10:05: each range keeps the newest.
    const filed = await h.query<{ minute: string; trace_count: number }>(
      "SELECT toString(minute) AS minute, trace_count FROM session_minutes FINAL WHERE project_id = {p:String} AND session_id = 'S' ORDER BY minute",
      { p: own.projectId },
    );
    expect(filed.map((row) => [row.minute, Number(row.trace_count)])).toStrictEqual([
      ['2026-11-05 10:00:00', 1],
      ['2026-11-05 10:05:00', 2],
    ]);
    expect(await listed('2026-11-05T10:00:00Z', '2026-11-05T10:02:00Z')).toStrictEqual(bySpend(s, q));
    expect(await listed('2026-11-05T10:01:30Z', '2026-11-05T10:02:00Z')).toStrictEqual(bySpend(s));
    expect(await listed('2026-11-05T10:05:00Z', '2026-11-05T10:06:00Z')).toStrictEqual(bySpend(s));
    expect(await listed('2026-11-05T10:05:30Z')).toStrictEqual(bySpend(s));
    expect(await listed('2026-11-05T10:05:31Z')).toStrictEqual(bySpend());
    expect(await listed(undefined, '2026-11-05T10:00:10Z')).toStrictEqual(bySpend());
    expect(await listed(undefined, '2026-11-05T10:00:11Z')).toStrictEqual(bySpend(s));
  });

  it('refuses what it cannot answer, saying why', async () => {
    const refuse = async (query: Record<string, unknown>, message: RegExp) => {
      const answer = await graphql(api, 'query($q: MetricsQuery!) { metrics(query: $q) { granularity } }', { q: query }, project.apiKey);
      expect(answer.errors?.[0]?.message).toMatch(message);
    };
    await refuse({ view: 'FEEDBACK', measures: ['COST_USD'], ...RANGE }, /COST_USD is not available on FEEDBACK/);
    await refuse({ view: 'TRACES', measures: ['COUNT'], groupBy: ['MODEL'], ...RANGE }, /MODEL is not available on TRACES/);
    await refuse({ view: 'SPANS', measures: ['COUNT'], timezone: 'Mars/Olympus', ...RANGE }, /not an IANA time zone/);
    await refuse({ view: 'SPANS', measures: ['COUNT'], granularity: 'MINUTE', ...RANGE }, /more than 2000 minute buckets/);
    await refuse({ view: 'SPANS', measures: ['COUNT'], from: RANGE.to, to: RANGE.from }, /from must be before to/);
  });
});
