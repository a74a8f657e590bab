/*
 * A small weather agent, written against each instrumentation library the way its own docs say to
 * use it, unmodified, in a process of its own (as a customer's app runs: the libraries register
 * global OpenTelemetry state, patch the `openai` client, and some are ESM only). Run by
 * real-libraries.int-spec.ts as `node agents.ts <library>` (Node strips the types):
 *
 *   OPENAI_BASE_URL                    the fake OpenAI-compatible server (test/support/fake-openai.ts)
 *   OTEL_EXPORTER_OTLP_ENDPOINT        the gateway, as README.md tells customers to set it
 *   OTEL_EXPORTER_OTLP_HEADERS         authorization=Bearer%20<project key>
 *   TRACELOOP_BASE_URL, TRACELOOP_API_KEY   the same, the way the Traceloop SDK takes them
 *   SESSION_ID                         the conversation the agent's turns belong to
 *
 * Each agent asks for the weather in "Porto": the model calls the weather tool, then answers in
 * text. It prints one JSON line `{"answers": [...]}` with the texts the app received, after its
 * spans are flushed.
 */
import { context, trace } from '@opentelemetry/api';
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks';
import { OTLPTraceExporter } from '@opentelemetry/exporter-trace-otlp-proto';
import { resourceFromAttributes } from '@opentelemetry/resources';
import { BatchSpanProcessor, TracerProvider } from '@opentelemetry/sdk-trace';
import OpenAI from 'openai';
// Static like `openai`: the instrumentation's types name the same (CommonJS-resolved) `openai` module.
import { OpenAIInstrumentation } from '@arizeai/openinference-instrumentation-openai';
import { setSession, traceAgent, traceTool } from '@arizeai/openinference-core';

const QUESTION = 'What is the weather in "Porto"?';
const AGENT = 'weather-agent';

function env(name: string): string {
  const value = process.env[name];
  if (!value) throw new Error(`${name} is not set`);
  return value;
}

async function weatherOf(city: string): Promise<{ city: string; celsius: number }> {
  return { city, celsius: 21 };
}

/** The plain OpenTelemetry JS setup a customer writes: global provider, async context, OTLP/HTTP protobuf exporter configured by the environment. */
function registerOpenTelemetry(serviceName: string): TracerProvider {
  const provider = new TracerProvider({
    resource: resourceFromAttributes({ 'service.name': serviceName }),
    spanProcessors: [new BatchSpanProcessor({ exporter: new OTLPTraceExporter() })],
  });
  context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable());
  trace.setGlobalTracerProvider(provider);
  return provider;
}

/** Vercel AI SDK 6: experimental_telemetry per call, the session as telemetry metadata; chat completions, streamed and not, and an embedding. */
async function vercelAi6(): Promise<string[]> {
  const provider = registerOpenTelemetry('vercel-ai-6-agent');
  const { generateText, streamText, embed, tool, stepCountIs } = await import('ai6');
  const { createOpenAI } = await import('@ai-sdk/openai3');
  const { z } = await import('zod');
  const openai = createOpenAI({ baseURL: env('OPENAI_BASE_URL'), apiKey: 'sk-fake' });
  const tools = {
    weather: tool({
      description: 'The weather in a city',
      inputSchema: z.object({ city: z.string() }),
      execute: ({ city }) => weatherOf(city),
    }),
  };
  const experimental_telemetry = { isEnabled: true, functionId: AGENT, metadata: { sessionId: env('SESSION_ID') } };
  const generated = await generateText({
    model: openai.chat('gpt-4o-mini'),
    tools,
    stopWhen: stepCountIs(3),
    prompt: QUESTION,
    experimental_telemetry,
  });
  const streamed = streamText({
    model: openai.chat('gpt-4o-mini'),
    tools,
    stopWhen: stepCountIs(3),
    prompt: QUESTION,
    experimental_telemetry,
  });
  const streamedText = await streamed.text;
  await embed({ model: openai.embedding('text-embedding-3-small'), value: streamedText, experimental_telemetry });
  await provider.shutdown();
  return [generated.text, streamedText];
}

/**
 * Vercel AI SDK 7: telemetry is on once @ai-sdk/otel is registered; the session goes in through the
 * runtime context (no telemetry metadata any more), let through by includeRuntimeContext. The
 * provider's default model API is the Responses API (v6 above drives the chat completions).
 */
async function vercelAi7(): Promise<string[]> {
  const provider = registerOpenTelemetry('vercel-ai-7-agent');
  const { generateText, streamText, embed, tool, isStepCount, registerTelemetry } = await import('ai');
  const { OpenTelemetry } = await import('@ai-sdk/otel');
  const { createOpenAI } = await import('@ai-sdk/openai');
  const { z } = await import('zod');
  registerTelemetry(new OpenTelemetry({ usage: true, runtimeContext: true }));
  const openai = createOpenAI({ baseURL: env('OPENAI_BASE_URL'), apiKey: 'sk-fake' });
  const tools = {
    weather: tool({
      description: 'The weather in a city',
      inputSchema: z.object({ city: z.string() }),
      execute: ({ city }) => weatherOf(city),
    }),
  };
  const runtimeContext = { sessionId: env('SESSION_ID'), apiToken: 'not-for-telemetry' };
  const telemetry = { functionId: AGENT, includeRuntimeContext: { sessionId: true } };
  const common = { tools, stopWhen: isStepCount(3), prompt: QUESTION, runtimeContext, telemetry };
  const generated = await generateText({ model: openai('gpt-4o-mini'), ...common });
  const streamed = streamText({ model: openai('gpt-4o-mini'), ...common });
  const streamedText = await streamed.text;
  await embed({ model: openai.embedding('text-embedding-3-small'), value: streamedText, runtimeContext, telemetry });
  await provider.shutdown();
  return [generated.text, streamedText];
}

type ChatMessage = OpenAI.Chat.Completions.ChatCompletionMessageParam;
type ChatTool = OpenAI.Chat.Completions.ChatCompletionTool;

const OPENAI_TOOLS: ChatTool[] = [
  {
    type: 'function',
    function: {
      name: 'weather',
      description: 'The weather in a city',
      parameters: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] },
    },
  },
];

/** The hand-written agent loop over the `openai` client: a tool call answered, then the answer streamed with usage. */
async function openAiAgentLoop(client: OpenAI, runTool: (args: { city: string }) => Promise<unknown>): Promise<string> {
  const messages: ChatMessage[] = [{ role: 'user', content: QUESTION }];
  const first = await client.chat.completions.create({ model: 'gpt-4o-mini', messages, tools: OPENAI_TOOLS });
  const message = first.choices[0]!.message;
  messages.push(message);
  for (const call of message.tool_calls ?? []) {
    if (call.type !== 'function') continue;
    const result = await runTool(JSON.parse(call.function.arguments) as { city: string });
    messages.push({ role: 'tool', tool_call_id: call.id, content: JSON.stringify(result) });
  }
  const stream = await client.chat.completions.create({
    model: 'gpt-4o-mini',
    messages,
    tools: OPENAI_TOOLS,
    stream: true,
    stream_options: { include_usage: true },
  });
  let text = '';
  for await (const chunk of stream) text += chunk.choices[0]?.delta?.content ?? '';
  return text;
}

/**
 * OpenInference: the OpenAI instrumentation applied with manuallyInstrument ("needed when the module
 * is not loaded via require": no require hook sees an ESM import), the agent and tool wrapped with
 * openinference-core's helpers, the session set in the context.
 */
async function openInference(): Promise<string[]> {
  const provider = registerOpenTelemetry('openinference-agent');
  new OpenAIInstrumentation().manuallyInstrument(OpenAI);
  const client = new OpenAI({ baseURL: env('OPENAI_BASE_URL'), apiKey: 'sk-fake' });
  const weather = traceTool(({ city }: { city: string }) => weatherOf(city), { name: 'weather' });
  const agent = traceAgent(
    async () => {
      const text = await openAiAgentLoop(client, weather);
      await client.embeddings.create({ model: 'text-embedding-3-small', input: text });
      return text;
    },
    { name: AGENT },
  );
  const text = await context.with(setSession(context.active(), { sessionId: env('SESSION_ID') }), () => agent());
  await provider.shutdown();
  return [text];
}

/** OpenLLMetry JS: initialize from TRACELOOP_* (its docs), the openai module handed over (ESM), workflow/agent/tool wrappers, the session as an association property. */
async function traceloop(): Promise<string[]> {
  const sdk = await import('@traceloop/node-server-sdk');
  sdk.initialize({ appName: 'traceloop-agent', instrumentModules: { openAI: OpenAI }, silenceInitializationMessage: true });
  const client = new OpenAI({ baseURL: env('OPENAI_BASE_URL'), apiKey: 'sk-fake' });
  const associationProperties = { [sdk.AssociationProperty.SESSION_ID]: env('SESSION_ID') };
  const text: string = await sdk.withWorkflow({ name: 'weather_workflow', associationProperties }, () =>
    sdk.withAgent({ name: 'weather_agent' }, () =>
      openAiAgentLoop(client, (args) => sdk.withTool({ name: 'weather' }, ({ city }: { city: string }) => weatherOf(city), args)),
    ),
  );
  await sdk.forceFlush();
  return [text];
}

const LIBRARIES: Record<string, () => Promise<string[]>> = {
  'vercel-ai-6': vercelAi6,
  'vercel-ai-7': vercelAi7,
  openinference: openInference,
  traceloop,
};

async function main(): Promise<void> {
  const library = process.argv[2] ?? '';
  const run = LIBRARIES[library];
  if (!run) throw new Error(`unknown library '${library}'; one of ${Object.keys(LIBRARIES).join(', ')}`);
  const answers = await run();
  process.stdout.write(`${JSON.stringify({ answers })}\n`);
}

main().then(
  // Some SDKs keep timers (metric readers, retries) alive: the flush above is the end of the run.
  () => process.exit(0),
  (error: unknown) => {
    process.stderr.write(`${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
    process.exit(1);
  },
);
