import type { ReadableSpan, SpanExporter } from '@opentelemetry/sdk-trace';
import { expectedLlmCost, expectedTrace, recordAgentTrace, type LlmCall } from '../integration/agent-trace';
import { SpanRecorder, exportSpans, exportSucceeded, otlpExporter } from '../support';

/**
 * The traffic of the scaled-out test (scaled-out.e2e-spec.ts): agent traces exported half through
 * each of two gateways, what the API answers about them, and the same figures computed from the
 * spans sent.
 */
const MINI: LlmCall = { model: 'gpt-4o-mini', provider: 'openai', input: 1_000, cacheRead: 200, output: 100 };
const SONNET: LlmCall = { model: 'claude-3-5-sonnet-20241022', provider: 'anthropic', input: 3_000, cacheRead: 0, output: 400 };
const SESSIONS = 4;
/** 09:00 UTC; traces alternate between this day and the next, so the daily costs have two days. */
const BASE = Date.UTC(2026, 10, 20, 9);
const DAY = 86_400_000;
const range = { from: new Date(BASE - DAY).toISOString(), to: new Date(BASE + 3 * DAY).toISOString() };

/** A GraphQL call with the project's key that fails the test on errors. */
export type Ask = <T>(query: string, variables?: Record<string, unknown>) => Promise<T>;
export type Figures = Awaited<ReturnType<typeof readFigures>>;

export class Traffic {
  /** Every trace sent so far, with what the API must answer for it, computed from its spans. */
  readonly sent: Array<{ spans: ReadableSpan[]; expected: ReturnType<typeof expectedTrace>; day: string }> = [];
  /**
   * Spans of exports a gateway may have taken twice: sent again after a failure, sent while a
   * service was down, or in flight to a gateway when it was killed (the OTel exporter retries
   * those itself). Stored once, but `usage` meters every export a gateway took.
   */
  resentSpans = 0;
  /** Spans in exports now in flight, per gateway. */
  readonly inFlight = [0, 0];
  /** Exports answered 200 so far. */
  acknowledged = 0;
  /** Told of each export's answer, 200 or not, once `inFlight` and `acknowledged` include it (atAnswer). */
  private onAnswer?: () => void;

  /** `gateways`: the OTLP/HTTP base URL of each of the two gateways, asked at each send. */
  constructor(
    private readonly gateways: () => string[],
    private readonly apiKey: () => string,
  ) {}

  /**
   * Records `count` traces and exports each one half through each gateway, every export at once.
   * With `failover`, an export that fails goes to the other gateway, again until one takes it (what
   * a balancer or the SDK's retry does); the spans of such exports are counted in `resentSpans`,
   * since a gateway may have queued an export it could not answer. An OTel exporter refuses more
   * than 30 exports in flight, so each 10 traces get exporters of their own. `during` says whether a
   * service is down now (exports sent then count as resent). Resolves with whether every export was
   * answered 200 in the end.
   */
  async send(count: number, options: { failover?: boolean; during?: () => boolean } = {}): Promise<boolean> {
    const exporters: SpanExporter[] = [];
    const exports: Array<Promise<boolean>> = [];
    const deliver = async (pair: SpanExporter[], spans: ReadableSpan[], first: number) => {
      for (let attempt = 0; ; attempt++) {
        const target = (first + attempt) % 2;
        // Sent while a service was down: the gateway may queue it later and still answer an error.
        if (options.during?.()) this.resentSpans += spans.length;
        this.inFlight[target]! += spans.length;
        const ok = exportSucceeded(await exportSpans(pair[target]!, spans));
        this.inFlight[target]! -= spans.length;
        if (ok) this.acknowledged++;
        this.onAnswer?.();
        if (ok) return true;
        if (!options.failover || attempt === 100) return false;
        this.resentSpans += spans.length;
        await new Promise((r) => setTimeout(r, 100));
      }
    };
    let pair: SpanExporter[] = [];
    for (let n = 0; n < count; n++) {
      if (n % 10 === 0) {
        pair = this.gateways().map((url) => otlpExporter('http/protobuf', { http: url, grpc: '' }, this.apiKey()));
        exporters.push(...pair);
      }
      const i = this.sent.length;
      const recorder = new SpanRecorder('scaled-agent');
      const calls = [MINI, ...(i % 3 === 0 ? [SONNET] : []), ...(i % 2 === 0 ? [{ ...MINI, failed: i % 4 === 0 }] : [])];
      const start = BASE + (i % 2) * DAY + i * 60_000;
      recordAgentTrace(recorder, { session: `scaled-session-${i % SESSIONS}`, calls, start });
      const spans = recorder.finished();
      this.sent.push({ spans, expected: expectedTrace(spans), day: new Date(start).toISOString().slice(0, 10) });
      const half = Math.ceil(spans.length / 2);
      exports.push(deliver(pair, spans.slice(0, half), 0));
      exports.push(deliver(pair, spans.slice(half), 1));
    }
    const answered = await Promise.all(exports);
    await Promise.all(exporters.map((e) => e.shutdown()));
    return answered.every(Boolean);
  }

  /**
   * What `state` gives at the first answer after which it gives something: checked at each answer,
   * so that a state polling would miss between two polls (a quick gateway answers all of its
   * exports at once) is caught, and the caller acts on it before another answer is read. Fails if
   * `ended` settles first (the traffic that could bring it is over) or after `timeoutMs`.
   */
  atAnswer<T>(state: () => T | undefined, what: string, ended: Promise<unknown>, timeoutMs: number): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      const settle = (settled: () => void) => {
        if (this.onAnswer !== check) return;
        this.onAnswer = undefined;
        clearTimeout(timeout);
        settled();
      };
      const fail = (why: string) =>
        settle(() =>
          reject(
            new Error(
              `${why} waiting for ${what}: ${this.acknowledged} exports answered 200, ${this.inFlight.join(' and ')} spans in flight`,
            ),
          ),
        );
      const check = () => {
        const found = state();
        if (found !== undefined) settle(() => resolve(found));
      };
      const timeout = setTimeout(() => fail(`timed out after ${timeoutMs} ms`), timeoutMs);
      this.onAnswer = check;
      const over = () => fail('the traffic ended');
      void ended.then(over, over);
    });
  }

  /** The same figures, computed from the spans sent. */
  expected(): Figures {
    const sent = this.sent;
    const sum = (list: typeof sent, f: (t: (typeof sent)[number]) => number) => list.reduce((s, t) => s + f(t), 0);
    const days = [...new Set(sent.map((t) => t.day))].sort();
    return {
      traces: sent
        .map(({ expected: e }) => ({
          traceId: e.traceId,
          sessionId: e.session,
          costUsd: e.costUsd,
          inputTokens: e.inputTokens,
          outputTokens: e.outputTokens,
          errorCount: e.errorCount,
        }))
        .sort((a, b) => a.traceId.localeCompare(b.traceId)),
      sessions: Array.from({ length: SESSIONS }, (_, s) => {
        const own = sent.filter((t) => t.expected.session === `scaled-session-${s}`);
        return {
          sessionId: `scaled-session-${s}`,
          traceCount: own.length,
          costUsd: sum(own, (t) => t.expected.costUsd),
          inputTokens: sum(own, (t) => t.expected.inputTokens),
          outputTokens: sum(own, (t) => t.expected.outputTokens),
        };
      }),
      daily: days.map((day) => {
        const llm = sent
          .filter((t) => t.day === day)
          .flatMap((t) => t.spans.filter((s) => s.attributes['gen_ai.operation.name'] === 'chat'));
        return { day, costUsd: llm.reduce((s, span) => s + expectedLlmCost(span), 0) };
      }),
      spansAccepted: sum(sent, (t) => t.spans.length),
    };
  }
}

/** What the API answers: every trace (page by page), the sessions, the daily costs and today's accepted spans. */
export async function readFigures(ask: Ask) {
  type TraceNode = { traceId: string; sessionId: string; costUsd: number; inputTokens: number; outputTokens: number; errorCount: number };
  const traces: TraceNode[] = [];
  let after: string | null = null;
  for (;;) {
    const page: { traces: { totalCount: number; nodes: TraceNode[]; pageInfo: { endCursor: string; hasNextPage: boolean } } } = await ask(
      `query($a: String) { traces(first: 100, after: $a) {
          totalCount nodes { traceId sessionId costUsd inputTokens outputTokens errorCount } pageInfo { endCursor hasNextPage } } }`,
      { a: after },
    );
    traces.push(...page.traces.nodes);
    if (!page.traces.pageInfo.hasNextPage) break;
    after = page.traces.pageInfo.endCursor;
  }
  const today = Date.now() - (Date.now() % DAY);
  const data = await ask<{
    sessions: { nodes: Array<{ sessionId: string; traceCount: number; costUsd: number; inputTokens: number; outputTokens: number }> };
    costBreakdown: Array<{ keys: string[]; costUsd: number }>;
    usage: Array<{ spansAccepted: number }>;
  }>(
    `query($f: TraceFilter, $from: DateTime!, $to: DateTime!) {
        sessions(first: 100) { nodes { sessionId traceCount costUsd inputTokens outputTokens } }
        costBreakdown(groupBy: [DAY], filter: $f) { keys costUsd }
        usage(from: $from, to: $to) { spansAccepted } }`,
    { f: range, from: new Date(today - DAY).toISOString(), to: new Date(today + 2 * DAY).toISOString() },
  );
  return {
    traces: traces.sort((a, b) => a.traceId.localeCompare(b.traceId)),
    sessions: [...data.sessions.nodes].sort((a, b) => a.sessionId.localeCompare(b.sessionId)),
    daily: data.costBreakdown.map((r) => ({ day: r.keys[0]!, costUsd: r.costUsd })).sort((a, b) => a.day.localeCompare(b.day)),
    spansAccepted: data.usage.reduce((n, u) => n + u.spansAccepted, 0),
  };
}
