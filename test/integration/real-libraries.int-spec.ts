import { spawn } from 'node:child_process';
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { gunzipSync } from 'node:zlib';
import { decodeJsonExport, decodeProtobufExport, type DecodedSpan } from '@spanforge/otlp';
import { PriceTable } from '@spanforge/pricing';
import { graphql, ROOT } from '../support';
import { startFakeOpenAI, type FakeAnswer, type FakeOpenAI } from '../support/fake-openai';
import { startIngestHarness, type IngestHarness } from './ingest-harness';

/*
 * Issue 14: real instrumentation libraries, unchanged, against the gateway. Each library drives the
 * same small agent (real-libraries/agents.ts, in a node process of its own) against a fake
 * OpenAI-compatible server: a tool call, the tool, then a text answer, streamed or not, with a
 * session id passed the library's own way. What the fake answered (models, usage with cached
 * tokens, timing) is recorded, and so is every export the library sent (through a recording proxy
 * in front of the gateway). The stored trace, read back through GraphQL, must show the span types
 * our docs define, each model call's model, tokens and cost as the fake counted them, 0 own cost on
 * wrapper spans, span costs adding up to the trace and the session, the session id, and the
 * message contents.
 *
 * Where a library itself does not report something the fake sent, the expectation says so and
 * names the upstream code (see `reported` of each case): the store cannot know what was never sent.
 */

const AGENTS = path.join(ROOT, 'test', 'integration', 'real-libraries', 'agents.ts');
const QUESTION_CITY = 'Porto';
const TOOL = 'weather';

type SpanType = 'RUN' | 'AGENT' | 'LLM' | 'TOOL' | 'EMBEDDING' | 'CHAIN' | 'OTHER';

/** What a library states about one model call the fake answered. */
interface Reported {
  model: string;
  input: number;
  cacheRead: number;
  output: number;
}

interface LibraryCase {
  library: string;
  /** Traces the agent makes (one per top-level call of the library). */
  traces: number;
  /** Our type of a span the library sent, by its documented span names. */
  typeOf(span: DecodedSpan): SpanType;
  /** The model and usage the library reports for one answer of the fake (its own span for it given). */
  reported(answer: FakeAnswer, span: DecodedSpan): Reported;
  /** Whether it states time to first token of a streamed call. */
  statesTtft: boolean;
  /** The spans of the model calls the fake answered (default: every LLM and EMBEDDING span). */
  isModelCall?(span: DecodedSpan): boolean;
  /** How many wrapper spans state their model calls' usage again (Vercel's operation spans). */
  statingWrappers: number;
}

/** Everything the fake counted, as the API's contract reads it (input includes the cached tokens). */
function fullUsage(answer: FakeAnswer): Reported {
  return {
    model: answer.model,
    input: answer.usage.promptTokens,
    cacheRead: answer.usage.cachedTokens,
    output: answer.usage.completionTokens,
  };
}

const none = (model: string): Reported => ({ model, input: 0, cacheRead: 0, output: 0 });
const isRoot = (span: DecodedSpan) => span.parentSpanId === '';
const numberAttribute = (span: DecodedSpan, key: string) => Number(span.attributes[key] ?? 0);

const CASES: LibraryCase[] = [
  {
    // ai.generateText / ai.streamText / ai.embed wrap their doGenerate / doStream / doEmbed calls and ai.toolCall spans.
    library: 'vercel-ai-6',
    traces: 3,
    typeOf: (span) =>
      isRoot(span)
        ? 'RUN'
        : /\.do(Generate|Stream)$/.test(span.name)
          ? 'LLM'
          : span.name.endsWith('.doEmbed')
            ? 'EMBEDDING'
            : span.name === 'ai.toolCall'
              ? 'TOOL'
              : 'CHAIN',
    reported: (answer) => fullUsage(answer),
    statesTtft: true,
    statingWrappers: 3,
  },
  {
    // invoke_agent <model> > step <n> > chat <model> and execute_tool <tool>. embed() is an
    // `embeddings <model>` root around the `embeddings <model>` call: the same operation name and
    // attributes without the usage. Model operations at the root stay what they are (no RUN), so it
    // is an EMBEDDING span too, one that owns nothing.
    library: 'vercel-ai-7',
    traces: 3,
    typeOf: (span) =>
      span.name.startsWith('embeddings ')
        ? 'EMBEDDING'
        : isRoot(span)
          ? 'RUN'
          : span.name.startsWith('step ')
            ? 'AGENT'
            : span.name.startsWith('chat ')
              ? 'LLM'
              : span.name.startsWith('execute_tool ')
                ? 'TOOL'
                : 'OTHER',
    isModelCall: (span) => !isRoot(span) && (span.name.startsWith('chat ') || span.name.startsWith('embeddings ')),
    reported: (answer) => fullUsage(answer),
    statesTtft: true,
    // The invoke_agent roots (gen_ai.usage.*); the step spans carry only usage details without the cache reads.
    statingWrappers: 2,
  },
  {
    library: 'openinference',
    traces: 1,
    typeOf: (span) =>
      isRoot(span)
        ? 'RUN'
        : span.name === 'OpenAI Chat Completions'
          ? 'LLM'
          : span.name === 'OpenAI Embeddings'
            ? 'EMBEDDING'
            : span.name === TOOL
              ? 'TOOL'
              : 'OTHER',
    // @arizeai/openinference-instrumentation-openai 4.2.7 (dist/src/instrumentation.js): a stream's
    // chunks without choices, the usage chunk among them, are skipped (consumeChatCompletionStreamChunks),
    // so a streamed call has no token counts and only the requested model; embeddings never get
    // token counts (getEmbeddingEmbeddingsAttributes reads only the vectors).
    reported: (answer) =>
      answer.kind === 'embedding' ? none(answer.model) : answer.stream ? none(answer.requestedModel) : fullUsage(answer),
    statesTtft: false,
    statingWrappers: 0,
  },
  {
    library: 'traceloop',
    traces: 1,
    typeOf: (span) =>
      isRoot(span)
        ? 'RUN'
        : span.name.endsWith('.agent')
          ? 'AGENT'
          : span.name.endsWith('.tool')
            ? 'TOOL'
            : span.name.startsWith('chat ')
              ? 'LLM'
              : 'OTHER',
    // @traceloop/instrumentation-openai 0.27.0 (dist/index.js): prompt_tokens_details.cached_tokens is
    // never read (gen_ai.usage.input_tokens alone, so cached tokens count as uncached), and a
    // stream's usage chunk is ignored: with enrichTokens (the SDK's default) it states a tiktoken
    // estimate of the string message contents instead. Those estimates are what it reports.
    reported: (answer, span) =>
      answer.stream
        ? {
            model: answer.model,
            input: numberAttribute(span, 'gen_ai.usage.input_tokens'),
            cacheRead: 0,
            output: numberAttribute(span, 'gen_ai.usage.output_tokens'),
          }
        : { ...fullUsage(answer), cacheRead: 0 },
    statesTtft: false,
    statingWrappers: 0,
  },
];

/** One request a library sent to the gateway, as forwarded, with the spans it carried. */
interface Forwarded {
  path: string;
  contentType: string;
  authorization: string;
  status: number;
  spans: DecodedSpan[];
}

interface RecordingProxy {
  url: string;
  requests: Forwarded[];
  close(): Promise<void>;
}

const FORWARDED_HEADERS = ['content-type', 'content-encoding', 'authorization', 'x-api-key'];

function spansOf(path: string, headers: IncomingHttpHeaders, body: Buffer): DecodedSpan[] {
  if (!path.endsWith('/v1/traces')) return [];
  const bytes = headers['content-encoding'] === 'gzip' ? gunzipSync(body) : body;
  return String(headers['content-type']).includes('json') ? decodeJsonExport(bytes).spans : decodeProtobufExport(bytes).spans;
}

/** Forwards every request to the gateway and records it: what each library really sends, and where. */
async function startRecordingProxy(target: string): Promise<RecordingProxy> {
  const requests: Forwarded[] = [];
  const server: Server = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      void (async () => {
        const body = Buffer.concat(chunks);
        const headers = Object.fromEntries(
          FORWARDED_HEADERS.filter((name) => request.headers[name] !== undefined).map((name) => [name, String(request.headers[name])]),
        );
        const answer = await fetch(`${target}${request.url}`, {
          method: request.method,
          headers,
          body: request.method === 'POST' ? body : undefined,
        });
        const answered = Buffer.from(await answer.arrayBuffer());
        const path = (request.url ?? '').split('?')[0]!;
        requests.push({
          path,
          contentType: String(request.headers['content-type'] ?? ''),
          authorization: String(request.headers.authorization ?? ''),
          status: answer.status,
          spans: answer.status === 200 ? spansOf(path, request.headers, body) : [],
        });
        response.writeHead(answer.status, { 'content-type': answer.headers.get('content-type') ?? 'application/octet-stream' });
        response.end(answered);
      })().catch((error: unknown) => {
        response.writeHead(502);
        response.end(String(error));
      });
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    requests,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

/** Runs the agent of one library in its own node process (Node strips the TypeScript types). */
function runAgent(library: string, env: Record<string, string>, timeoutMs = 30_000): Promise<{ answers: string[] }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['--disable-warning=MODULE_TYPELESS_PACKAGE_JSON', AGENTS, library], {
      cwd: ROOT,
      // Only what the agent needs: no OTEL_* or TRACELOOP_* of the machine leaks into its setup.
      env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '', ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
    child.on('exit', (code, signal) => {
      clearTimeout(timer);
      const line = stdout.trim().split('\n').pop() ?? '';
      if (code !== 0 || !line.startsWith('{')) reject(new Error(`${library} agent exited ${code ?? signal}:\n${stderr}\n${stdout}`));
      else resolve(JSON.parse(line) as { answers: string[] });
    });
  });
}

interface StoredSpan {
  spanId: string;
  parentSpanId: string | null;
  name: string;
  type: string;
  model: string | null;
  inputTokens: number;
  outputTokens: number;
  costUsd: number;
  costSource: string | null;
  statedInputTokens: number | null;
  statedOutputTokens: number | null;
}

interface StoredTrace {
  traceId: string;
  sessionId: string | null;
  costUsd: number;
  inputTokens: number;
  outputTokens: number;
  llmCalls: number;
  models: string[];
  toolsUsed: string[];
  spans: StoredSpan[];
}

interface StoredSession {
  sessionId: string;
  traceCount: number;
  costUsd: number;
  inputTokens: number;
  outputTokens: number;
}

const TRACE_FIELDS =
  'traceId sessionId costUsd inputTokens outputTokens llmCalls models toolsUsed spans { spanId parentSpanId name type model inputTokens outputTokens costUsd costSource statedInputTokens statedOutputTokens }';

/** USD for the tokens at the bundled list price of the model (cached input at the cache-read price). */
function expectedCost(reported: Reported, at: number): number {
  if (reported.input + reported.output === 0) return 0;
  const price = PriceTable.bundled().lookup(reported.model.toLowerCase(), 'openai', at);
  if (!price) throw new Error(`no bundled price for ${reported.model}`);
  return (
    ((reported.input - reported.cacheRead) * price.inputPerMTok +
      reported.cacheRead * price.cacheReadPerMTok +
      reported.output * price.outputPerMTok) /
    1e6
  );
}

const sum = <T>(items: readonly T[], value: (item: T) => number) => items.reduce((n, item) => n + value(item), 0);

describe('real instrumentation libraries, unchanged, against the gateway', () => {
  let h: IngestHarness;
  let api: string;
  let fake: FakeOpenAI;
  let proxy: RecordingProxy;

  beforeAll(async () => {
    h = await startIngestHarness();
    api = h.api;
    fake = await startFakeOpenAI();
    proxy = await startRecordingProxy(h.http);
  });
  afterAll(async () => {
    await proxy?.close();
    await fake?.close();
    await h?.stop();
  });

  it.each(CASES)('$library: types, models, tokens, costs, session and contents as the model answered', async (spec) => {
    const project = await h.newProject(spec.library);
    const sessionId = `${spec.library}-session-${Math.random().toString(36).slice(2, 8)}`;
    const fromAnswer = fake.answers.length;
    const started = Date.now();
    const run = await runAgent(spec.library, {
      OPENAI_BASE_URL: fake.baseURL,
      OTEL_EXPORTER_OTLP_ENDPOINT: proxy.url,
      OTEL_EXPORTER_OTLP_HEADERS: `authorization=Bearer%20${project.apiKey}`,
      TRACELOOP_BASE_URL: proxy.url,
      TRACELOOP_API_KEY: project.apiKey,
      SESSION_ID: sessionId,
    });
    const answers = fake.answers.slice(fromAnswer);
    const requests = proxy.requests.filter((r) => r.authorization === `Bearer ${project.apiKey}`);

    // The agent ran to its answers: a tool call first, then text, on every turn.
    expect(run.answers).toEqual(answers.filter((a) => a.kind === 'text').map((a) => a.text));
    expect(answers.filter((a) => a.kind === 'tool_call')).toHaveLength(run.answers.length);
    // It exported OTLP/HTTP protobuf to /v1/traces only, and every export was taken.
    expect(requests.map((r) => `${r.path} ${r.contentType} ${r.status}`)).toEqual(
      requests.map(() => '/v1/traces application/x-protobuf 200'),
    );
    const sent = [...new Map(requests.flatMap((r) => r.spans).map((s) => [s.spanId, s])).values()];
    const traceIds = [...new Set(sent.map((s) => s.traceId))];
    expect(traceIds).toHaveLength(spec.traces);
    await h.waitForSpans(project.projectId, sent.length, 20_000);

    // Read back once the session rollup has every trace.
    let traces: StoredTrace[] = [];
    let session: StoredSession | undefined;
    const deadline = Date.now() + 20_000;
    for (;;) {
      const read = await graphql<Record<string, StoredTrace | null> & { sessions: { nodes: StoredSession[] } }>(
        api,
        `{ ${traceIds.map((id, i) => `t${i}: trace(traceId: "${id}") { ${TRACE_FIELDS} }`).join(' ')}
           sessions(first: 50) { nodes { sessionId traceCount costUsd inputTokens outputTokens } } }`,
        {},
        project.apiKey,
      );
      expect(read.errors).toBeUndefined();
      traces = traceIds.map((_, i) => read.data![`t${i}`] as StoredTrace | null).filter((t): t is StoredTrace => t !== null);
      session = read.data!.sessions.nodes.find((s) => s.sessionId === sessionId);
      const complete = traces.length === spec.traces && sum(traces, (t) => t.spans.length) === sent.length;
      if ((complete && session?.traceCount === spec.traces) || Date.now() > deadline) break;
      await new Promise((resolve) => setTimeout(resolve, 200));
    }
    expect(traces).toHaveLength(spec.traces);

    const stored = new Map(traces.flatMap((t) => t.spans).map((s) => [s.spanId, s]));
    const rows = await h.query<{ span_id: string; tokens_cache_read: string; ttft_ms: number | null; duration_ms: number }>(
      `SELECT span_id, tokens_cache_read, ttft_ms, duration_ns / 1e6 AS duration_ms
         FROM spans FINAL WHERE tenant_id = {tenantId:String} AND project_id = {projectId:String}`,
      { tenantId: project.tenantId, projectId: project.projectId },
    );
    const row = new Map(rows.map((r) => [r.span_id, r]));

    // Span types as our docs define them; every span was stored.
    expect(Object.fromEntries(sent.map((s) => [`${s.name} ${s.spanId}`, stored.get(s.spanId)?.type]))).toEqual(
      Object.fromEntries(sent.map((s) => [`${s.name} ${s.spanId}`, spec.typeOf(s)])),
    );

    // Model calls in the order the fake answered them: model, tokens, cached tokens, cost, TTFT.
    const isModelCall = spec.isModelCall ?? ((s: DecodedSpan) => ['LLM', 'EMBEDDING'].includes(spec.typeOf(s)));
    const calls = sent.filter(isModelCall).sort((a, b) => (a.startTimeUnixNano < b.startTimeUnixNano ? -1 : 1));
    expect(calls.map((s) => spec.typeOf(s))).toEqual(answers.map((a) => (a.kind === 'embedding' ? 'EMBEDDING' : 'LLM')));
    const expected = calls.map((span, i) => ({ span, answer: answers[i]!, reported: spec.reported(answers[i]!, span) }));
    for (const { span, answer, reported } of expected) {
      const own = stored.get(span.spanId)!;
      const cost = expectedCost(reported, started);
      expect({
        model: own.model,
        inputTokens: own.inputTokens,
        cacheRead: Number(row.get(span.spanId)?.tokens_cache_read),
        outputTokens: own.outputTokens,
      }).toEqual({ model: reported.model, inputTokens: reported.input, cacheRead: reported.cacheRead, outputTokens: reported.output });
      expect(own.costUsd).toBeCloseTo(cost, 12);
      if (cost > 0) expect(own.costSource).toBe('PRICE_TABLE');
      const ttft = row.get(span.spanId)?.ttft_ms ?? null;
      if (answer.stream && spec.statesTtft) {
        // From the library's request to the first chunk: at least the fake's own delay before it.
        expect(ttft).not.toBeNull();
        expect(ttft!).toBeGreaterThanOrEqual(answer.firstChunkAt - answer.receivedAt - 2);
        expect(ttft!).toBeLessThanOrEqual(row.get(span.spanId)!.duration_ms);
      } else {
        expect(ttft).toBeNull();
      }
    }
    // Every chat call had a cache hit: the cache-read price is exercised wherever a library reports it.
    expect(answers.filter((a) => a.kind !== 'embedding').every((a) => a.usage.cachedTokens > 0)).toBe(true);

    // Wrapper spans (runs, agents, steps, chains, v7's embed root) and tools own no usage; what a
    // wrapper states is its model calls' usage again (shown apart, as stated tokens).
    const ownersOfUsage = new Set(calls.map((s) => s.spanId));
    const below = (ancestor: string, span: DecodedSpan): boolean => {
      for (let parent = span.parentSpanId; parent !== ''; parent = sent.find((s) => s.spanId === parent)?.parentSpanId ?? '')
        if (parent === ancestor) return true;
      return false;
    };
    let stating = 0;
    for (const span of sent.filter((s) => !ownersOfUsage.has(s.spanId))) {
      const own = stored.get(span.spanId)!;
      expect({ span: span.name, cost: own.costUsd, input: own.inputTokens, output: own.outputTokens }).toEqual({
        span: span.name,
        cost: 0,
        input: 0,
        output: 0,
      });
      if (own.statedInputTokens === null) continue;
      stating++;
      const inner = calls.filter((call) => below(span.spanId, call)).map((call) => stored.get(call.spanId)!);
      expect({ span: span.name, input: own.statedInputTokens, output: own.statedOutputTokens }).toEqual({
        span: span.name,
        input: sum(inner, (c) => c.inputTokens),
        output: sum(inner, (c) => c.outputTokens),
      });
    }
    expect(stating).toBe(spec.statingWrappers);

    // Each trace is the sum of its spans, belongs to the session, and names its tool and models.
    for (const trace of traces) {
      expect(trace.sessionId).toBe(sessionId);
      expect(trace.costUsd).toBeCloseTo(
        sum(trace.spans, (s) => s.costUsd),
        10,
      );
      expect(trace.inputTokens).toBe(sum(trace.spans, (s) => s.inputTokens));
      expect(trace.outputTokens).toBe(sum(trace.spans, (s) => s.outputTokens));
      const mine = expected.filter((e) => e.span.traceId === trace.traceId);
      expect(trace.costUsd).toBeCloseTo(
        sum(mine, (e) => expectedCost(e.reported, started)),
        10,
      );
      expect(trace.llmCalls).toBe(mine.filter((e) => e.answer.kind !== 'embedding').length);
      // The models that answered; wrapper spans add the model they asked for (the Vercel ai.generateText's ai.model.id).
      const answered = mine.map((e) => e.reported.model);
      expect(trace.models).toEqual(expect.arrayContaining([...new Set(answered)]));
      expect([...answered, ...mine.map((e) => e.answer.requestedModel)]).toEqual(expect.arrayContaining(trace.models));
      const tools = sent.filter((s) => s.traceId === trace.traceId && spec.typeOf(s) === 'TOOL');
      expect(trace.toolsUsed).toEqual(tools.length > 0 ? [TOOL] : []);
    }
    expect(session).toMatchObject({
      traceCount: spec.traces,
      inputTokens: sum(traces, (t) => t.inputTokens),
      outputTokens: sum(traces, (t) => t.outputTokens),
    });
    expect(session!.costUsd).toBeCloseTo(
      sum(expected, (e) => expectedCost(e.reported, started)),
      10,
    );

    // Message contents: every chat call's input holds the question and its output what the model
    // answered (the tool it called, or its text); every tool call its arguments and result.
    const detail = async (span: DecodedSpan) =>
      (
        await graphql<{ spanDetail: { input: string; output: string } | null }>(
          api,
          'query($t: String!, $s: String!) { spanDetail(traceId: $t, spanId: $s) { input output } }',
          { t: span.traceId, s: span.spanId },
          project.apiKey,
        )
      ).data!.spanDetail!;
    for (const { span, answer } of expected.filter((e) => e.answer.kind !== 'embedding')) {
      const { input, output } = await detail(span);
      expect(input).toContain(QUESTION_CITY);
      expect(output).toContain(answer.kind === 'tool_call' ? answer.toolName! : answer.text!);
    }
    for (const span of sent.filter((s) => spec.typeOf(s) === 'TOOL')) {
      const { input, output } = await detail(span);
      expect({ input, output }).toEqual({ input: expect.stringContaining(QUESTION_CITY), output: expect.stringContaining('celsius') });
    }
  });
});
