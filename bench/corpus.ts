import { SpanKind, SpanStatusCode, context, trace, type Span, type Tracer } from '@opentelemetry/api';
import { resourceFromAttributes } from '@opentelemetry/resources';
import { InMemorySpanExporter, SimpleSpanProcessor, TracerProvider, type IdGenerator } from '@opentelemetry/sdk-trace';
import { ProtobufTraceSerializer } from '@opentelemetry/otlp-transformer';

/** mulberry32: a tiny fixed-seed PRNG, so every run sends the same corpus. */
export function prng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

class SeededIds implements IdGenerator {
  constructor(private readonly random: () => number) {}
  private hex(bytes: number): string {
    let out = '';
    for (let i = 0; i < bytes; i++)
      out += Math.floor(this.random() * 256)
        .toString(16)
        .padStart(2, '0');
    return out;
  }
  generateTraceId(): string {
    return this.hex(16);
  }
  generateSpanId(): string {
    return this.hex(8);
  }
}

export const MODELS = [
  { provider: 'openai', model: 'gpt-4o-2024-08-06', weight: 4 },
  { provider: 'openai', model: 'gpt-4o-mini', weight: 5 },
  { provider: 'anthropic', model: 'claude-3-5-sonnet-20241022', weight: 3 },
  { provider: 'gcp.gemini', model: 'gemini-2.0-flash', weight: 2 },
  { provider: 'mistral_ai', model: 'mistral-large-latest', weight: 1 },
];
const TOOLS = ['search_web', 'read_file', 'run_sql', 'get_weather', 'send_email'];
const WORDS = 'the agent plans a step calls a tool reads documents and answers the user with care about cost latency and tokens'.split(' ');

export interface CorpusOptions {
  traces: number;
  seed?: number;
  /** Traces per session. */
  tracesPerSession?: number;
  /** Spans per OTLP export request, as a BatchSpanProcessor would send (default 512). */
  spansPerRequest?: number;
  startTime?: number;
  /**
   * The traces' starts spread evenly over this many ms from `startTime` (a load generator's round:
   * spans stamped about when they are sent, as live traffic's are). Default: 1–6 s apart.
   */
  spreadMs?: number;
}

/**
 * Only the encoded requests are kept: a bench that kept the SDK's span objects alive would charge
 * the server in its process with the garbage collection of the bench's own data (with them, the
 * floor's rows and the server's own data, full collections left 465–641 MB live during one
 * bench:ingest end-to-end run).
 */
export interface Corpus {
  /** OTLP ExportTraceServiceRequest bodies, in protobuf, `spansPerRequest` spans each. */
  requests: Uint8Array[];
  spanCount: number;
  traceCount: number;
}

/**
 * A realistic mix of agent traces: a run root carrying the session and user, 1–6 agent
 * iterations each with an LLM call (1–3 KB prompt as gen_ai.input.messages), tool calls and
 * sometimes a retrieval; ~3 % of LLM calls fail and are retried. About 10 spans a trace.
 */
export function buildCorpus(options: CorpusOptions): Corpus {
  const random = prng(options.seed ?? 42);
  const memory = new InMemorySpanExporter();
  const provider = new TracerProvider({
    resource: resourceFromAttributes({ 'service.name': 'bench-agent', 'deployment.environment': 'bench' }),
    spanProcessors: [new SimpleSpanProcessor({ exporter: memory })],
    idGenerator: new SeededIds(random),
  });
  const tracer = provider.getTracer('bench', '1.0.0');
  const pick = <T>(items: T[]) => items[Math.floor(random() * items.length)]!;
  const totalWeight = MODELS.reduce((s, m) => s + m.weight, 0);
  const pickModel = () => {
    let r = random() * totalWeight;
    for (const m of MODELS) if ((r -= m.weight) < 0) return m;
    return MODELS[0]!;
  };
  const text = (bytes: number) => {
    const words: string[] = [];
    let size = 0;
    while (size < bytes) {
      const w = pick(WORDS);
      words.push(w);
      size += w.length + 1;
    }
    return words.join(' ');
  };

  let clock = options.startTime ?? Date.UTC(2026, 10, 1);
  const perSession = options.tracesPerSession ?? 20;
  for (let t = 0; t < options.traces; t++) {
    // The seed in the id: corpora built with other seeds (a load generator's rounds) are other sessions, as live traffic's are.
    const session = `session-${options.seed ?? 42}-${Math.floor(t / perSession)}`;
    const iterations = 1 + Math.floor(random() * random() * 6);
    // Drawn with spreadMs too, so the rest of a seed's corpus is the same either way.
    clock += 1_000 + Math.floor(random() * 5_000);
    let at = options.spreadMs === undefined ? clock : (options.startTime ?? 0) + Math.floor((t * options.spreadMs) / options.traces);
    const root = start(
      tracer,
      'agent.run',
      undefined,
      at,
      {
        'session.id': session,
        'user.id': `user-${Math.floor(t / perSession) % 50}`,
        'gen_ai.operation.name': 'invoke_agent',
        'gen_ai.agent.name': 'support-agent',
      },
      SpanKind.SERVER,
    );
    for (let i = 0; i < iterations; i++) {
      const agent = start(tracer, 'invoke_agent planner', root, at, {
        'gen_ai.operation.name': 'invoke_agent',
        'gen_ai.agent.name': 'planner',
      });
      const model = pickModel();
      const attempts = random() < 0.03 ? 2 : 1;
      for (let a = 0; a < attempts; a++) {
        const duration = 300 + Math.floor(random() * 2_500);
        const input = 200 + Math.floor(random() * 3_000);
        const cached = random() < 0.4 ? Math.floor(input * 0.5) : 0;
        const output = 20 + Math.floor(random() * 600);
        const prompt = JSON.stringify([{ role: 'user', parts: [{ type: 'text', content: text(1_000 + Math.floor(random() * 2_000)) }] }]);
        const llm = start(
          tracer,
          `chat ${model.model}`,
          agent,
          at,
          {
            'gen_ai.operation.name': 'chat',
            'gen_ai.provider.name': model.provider,
            'gen_ai.request.model': model.model,
            'gen_ai.response.model': model.model,
            'gen_ai.usage.input_tokens': input,
            'gen_ai.usage.cache_read.input_tokens': cached,
            'gen_ai.usage.output_tokens': output,
            'gen_ai.input.messages': prompt,
            'gen_ai.output.messages': JSON.stringify([{ role: 'assistant', parts: [{ type: 'text', content: text(200) }] }]),
          },
          SpanKind.CLIENT,
        );
        const failed = a < attempts - 1;
        if (failed) llm.setStatus({ code: SpanStatusCode.ERROR, message: 'rate limited by provider' }).setAttribute('error.type', '429');
        at += duration;
        llm.end(at);
      }
      const tools = Math.floor(random() * 3);
      for (let k = 0; k < tools; k++) {
        const tool = pick(TOOLS);
        const span = start(tracer, `execute_tool ${tool}`, agent, at, {
          'gen_ai.operation.name': 'execute_tool',
          'gen_ai.tool.name': tool,
          'gen_ai.tool.call.arguments': JSON.stringify({ query: text(60) }),
        });
        at += 50 + Math.floor(random() * 800);
        span.end(at);
      }
      if (random() < 0.3) {
        const span = start(tracer, 'retrieval knowledge-base', agent, at, {
          'gen_ai.operation.name': 'retrieval',
          'gen_ai.data_source.id': 'kb-main',
        });
        at += 30 + Math.floor(random() * 200);
        span.end(at);
      }
      agent.end(at);
    }
    root.end(at + 5);
  }
  const spans = memory.getFinishedSpans();
  const perRequest = options.spansPerRequest ?? 512;
  const requests: Uint8Array[] = [];
  for (let i = 0; i < spans.length; i += perRequest) {
    requests.push(ProtobufTraceSerializer.serializeRequest(spans.slice(i, i + perRequest))!);
  }
  memory.reset();
  return { requests, spanCount: spans.length, traceCount: options.traces };
}

function start(
  tracer: Tracer,
  name: string,
  parent: Span | undefined,
  at: number,
  attributes: Record<string, string | number>,
  kind = SpanKind.INTERNAL,
): Span {
  const ctx = parent ? trace.setSpan(context.active(), parent) : context.active();
  return tracer.startSpan(name, { startTime: at, attributes, kind, root: !parent }, ctx);
}
