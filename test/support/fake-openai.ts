import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

/*
 * A small OpenAI-compatible server for driving real instrumentation libraries (the `openai` client,
 * the Vercel AI SDK's OpenAI provider) without the network. It behaves like a tool-calling model:
 * a request whose messages hold no tool result yet is answered with a call of the first tool offered;
 * once a tool result is there (or no tool is offered) it answers in text. Usage numbers are a
 * deterministic function of the request, and every answer is recorded, so a test computes what it
 * expects from what the server really returned.
 *
 * Endpoints: POST /v1/chat/completions (JSON, or SSE with `stream: true`, usage in a last chunk when
 * `stream_options.include_usage`), POST /v1/responses (JSON, or SSE with `stream: true`; usage always
 * in `response.completed`), POST /v1/embeddings (float or base64).
 */

/** The usage of one answer, in OpenAI's own shape and meaning (prompt tokens include the cached ones). */
export interface FakeUsage {
  promptTokens: number;
  cachedTokens: number;
  completionTokens: number;
}

export interface FakeAnswer {
  endpoint: 'chat' | 'responses' | 'embeddings';
  /** The model the client asked for. */
  requestedModel: string;
  /** The model the answer names (a dated snapshot, as the real API answers). */
  model: string;
  stream: boolean;
  /** What the model answered with. */
  kind: 'tool_call' | 'text' | 'embedding';
  /** The tool called (kind 'tool_call'). */
  toolName?: string;
  toolArguments?: string;
  /** The text answered (kind 'text'). */
  text?: string;
  /** Usage as counted; `reported` is false when a stream was asked without include_usage (the client never saw it). */
  usage: FakeUsage;
  reported: boolean;
  /** When the request arrived and when the first chunk (or the whole answer) was written, ms since epoch. */
  receivedAt: number;
  firstChunkAt: number;
}

export interface FakeOpenAI {
  /** Base URL including /v1, as SDKs take it (`baseURL`). */
  baseURL: string;
  answers: FakeAnswer[];
  close(): Promise<void>;
}

/** Snapshot names the fake answers with, as OpenAI answers an alias with its dated model. */
const SNAPSHOTS: Record<string, string> = { 'gpt-4o-mini': 'gpt-4o-mini-2024-07-18', 'gpt-4o': 'gpt-4o-2024-08-06' };

/** Delay before the first streamed chunk and between chunks, so time to first token is visible. */
const FIRST_CHUNK_DELAY_MS = 40;
const CHUNK_DELAY_MS = 5;

type Json = Record<string, unknown>;

function snapshotOf(model: string): string {
  return SNAPSHOTS[model] ?? model;
}

/** Deterministic usage: grows with the conversation; half the prompt, in whole 16-token blocks, is a cache hit (a repeated system prompt and tools). */
function usageFor(messageCount: number, requestChars: number, completionTokens: number): FakeUsage {
  const promptTokens = 40 + messageCount * 12 + Math.ceil(requestChars / 50);
  return { promptTokens, cachedTokens: Math.floor(promptTokens / 2 / 16) * 16, completionTokens };
}

function wordsOf(text: string): number {
  return text.split(/\s+/).filter(Boolean).length;
}

function readBody(request: IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    let body = '';
    request.setEncoding('utf8');
    request.on('data', (chunk: string) => (body += chunk));
    request.on('end', () => resolve(body));
    request.on('error', reject);
  });
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** The first tool a request offers, in the chat (`{type,function:{name}}`) or responses (`{type,name}`) shape. */
function firstToolName(tools: unknown): string | undefined {
  if (!Array.isArray(tools) || tools.length === 0) return undefined;
  const tool = tools[0] as Json;
  const fn = tool.function as Json | undefined;
  return (fn?.name ?? tool.name) as string | undefined;
}

/** Arguments for a tool call: the tool's required string properties filled with the word from the user's last message in quotes, else 'Lisbon'. */
function toolArguments(tools: unknown, lastUserText: string): string {
  const tool = (tools as Json[])[0];
  const schema = ((tool.function as Json | undefined)?.parameters ?? tool.parameters) as Json | undefined;
  const properties = (schema?.properties ?? {}) as Record<string, Json>;
  const quoted = /"([^"]+)"/.exec(lastUserText)?.[1] ?? 'Lisbon';
  const args: Json = {};
  for (const [name, property] of Object.entries(properties)) args[name] = property.type === 'number' ? 21 : quoted;
  return JSON.stringify(args);
}

function textOf(content: unknown): string {
  if (typeof content === 'string') return content;
  if (Array.isArray(content)) return content.map((part) => ((part as Json).text as string | undefined) ?? '').join('');
  return '';
}

/** The reply in text once a tool answered: names the tool result, so a test can find it in the output. */
function textReply(toolResult: string | undefined): string {
  return toolResult === undefined ? 'Hello from the fake model.' : `The tool said ${toolResult.replaceAll('"', "'")}; that is my answer.`;
}

/**
 * What the fake answers a request, whatever the endpoint: a call of the first tool offered until a
 * tool result comes back, then a text naming that result; usage from the request's size.
 */
function decide(
  endpoint: FakeAnswer['endpoint'],
  request: Json,
  input: { items: number; chars: number; toolResult: string | undefined; lastUserText: string; reported: boolean; receivedAt: number },
): FakeAnswer {
  const toolName = input.toolResult === undefined ? firstToolName(request.tools) : undefined;
  const requestedModel = String(request.model);
  const args = toolName ? toolArguments(request.tools, input.lastUserText) : undefined;
  const text = toolName ? undefined : textReply(input.toolResult);
  return {
    endpoint,
    requestedModel,
    model: snapshotOf(requestedModel),
    stream: request.stream === true,
    kind: toolName ? 'tool_call' : 'text',
    toolName,
    toolArguments: args,
    text,
    usage: usageFor(input.items, input.chars, toolName ? 9 + Math.ceil(args!.length / 4) : wordsOf(text!) + 2),
    reported: input.reported,
    receivedAt: input.receivedAt,
    firstChunkAt: 0,
  };
}

async function chatCompletions(request: Json, response: ServerResponse, answers: FakeAnswer[], receivedAt: number, chars: number) {
  const messages = (request.messages ?? []) as Json[];
  const toolMessage = [...messages].reverse().find((m) => m.role === 'tool');
  const lastUser = [...messages].reverse().find((m) => m.role === 'user');
  const stream = request.stream === true;
  const includeUsage = stream ? (request.stream_options as Json | undefined)?.include_usage === true : true;
  const id = `chatcmpl-fake${answers.length}`;
  const created = Math.floor(receivedAt / 1000);
  const answer = decide('chat', request, {
    items: messages.length,
    chars,
    toolResult: toolMessage ? textOf(toolMessage.content) : undefined,
    lastUserText: textOf(lastUser?.content),
    reported: includeUsage,
    receivedAt,
  });
  const { model, toolName, toolArguments: args, text, usage } = answer;
  answers.push(answer);
  const usageJson = {
    prompt_tokens: usage.promptTokens,
    completion_tokens: usage.completionTokens,
    total_tokens: usage.promptTokens + usage.completionTokens,
    prompt_tokens_details: { cached_tokens: usage.cachedTokens, audio_tokens: 0 },
    completion_tokens_details: { reasoning_tokens: 0, audio_tokens: 0, accepted_prediction_tokens: 0, rejected_prediction_tokens: 0 },
  };
  const toolCall = toolName
    ? { id: `call_fake${answers.length}`, type: 'function', function: { name: toolName, arguments: args } }
    : undefined;
  const finishReason = toolName ? 'tool_calls' : 'stop';

  if (!stream) {
    answer.firstChunkAt = Date.now();
    const message = toolCall
      ? { role: 'assistant', content: null, tool_calls: [toolCall], refusal: null }
      : { role: 'assistant', content: text, refusal: null };
    sendJson(response, {
      id,
      object: 'chat.completion',
      created,
      model,
      system_fingerprint: 'fp_fake',
      choices: [{ index: 0, message, logprobs: null, finish_reason: finishReason }],
      usage: usageJson,
    });
    return;
  }

  response.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache', connection: 'keep-alive' });
  const chunk = (choices: unknown[], extra: Json = {}) =>
    `data: ${JSON.stringify({ id, object: 'chat.completion.chunk', created, model, system_fingerprint: 'fp_fake', choices, ...extra })}\n\n`;
  const deltas: Json[] = [];
  if (toolCall) {
    deltas.push({ role: 'assistant', content: null, tool_calls: [{ index: 0, ...toolCall, function: { name: toolName, arguments: '' } }] });
    // Arguments in two pieces, as the real API streams them.
    const half = Math.ceil(args!.length / 2);
    deltas.push({ tool_calls: [{ index: 0, function: { arguments: args!.slice(0, half) } }] });
    deltas.push({ tool_calls: [{ index: 0, function: { arguments: args!.slice(half) } }] });
  } else {
    deltas.push({ role: 'assistant', content: '' });
    for (const piece of text!.match(/\S+\s*/g) ?? []) deltas.push({ content: piece });
  }
  await sleep(FIRST_CHUNK_DELAY_MS);
  answer.firstChunkAt = Date.now();
  for (const delta of deltas) {
    response.write(chunk([{ index: 0, delta, logprobs: null, finish_reason: null }]));
    await sleep(CHUNK_DELAY_MS);
  }
  response.write(chunk([{ index: 0, delta: {}, logprobs: null, finish_reason: finishReason }], includeUsage ? { usage: null } : {}));
  if (includeUsage) response.write(chunk([], { usage: usageJson }));
  response.end('data: [DONE]\n\n');
}

/** The Responses API (what `openai(model)` of the AI SDK's OpenAI provider calls). */
async function responses(request: Json, response: ServerResponse, answers: FakeAnswer[], receivedAt: number, chars: number) {
  const input = (typeof request.input === 'string' ? [{ role: 'user', content: request.input }] : (request.input ?? [])) as Json[];
  const toolOutput = [...input].reverse().find((item) => item.type === 'function_call_output');
  const lastUser = [...input].reverse().find((item) => item.role === 'user');
  const answer = decide('responses', request, {
    items: input.length,
    chars,
    toolResult: toolOutput ? String(toolOutput.output) : undefined,
    lastUserText: textOf(lastUser?.content),
    reported: true,
    receivedAt,
  });
  const { model, stream, toolName, toolArguments: args, text, usage } = answer;
  answers.push(answer);
  const id = `resp_fake${answers.length}`;
  const item = toolName
    ? {
        type: 'function_call',
        id: `fc_fake${answers.length}`,
        call_id: `call_fake${answers.length}`,
        name: toolName,
        arguments: args,
        status: 'completed',
      }
    : {
        type: 'message',
        id: `msg_fake${answers.length}`,
        role: 'assistant',
        status: 'completed',
        content: [{ type: 'output_text', text, annotations: [], logprobs: [] }],
      };
  const usageJson = {
    input_tokens: usage.promptTokens,
    input_tokens_details: { cached_tokens: usage.cachedTokens },
    output_tokens: usage.completionTokens,
    output_tokens_details: { reasoning_tokens: 0 },
    total_tokens: usage.promptTokens + usage.completionTokens,
  };
  const body = (status: string, output: unknown[], withUsage: boolean) => ({
    id,
    object: 'response',
    created_at: Math.floor(receivedAt / 1000),
    status,
    model,
    output,
    incomplete_details: null,
    usage: withUsage ? usageJson : null,
  });
  if (!stream) {
    answer.firstChunkAt = Date.now();
    sendJson(response, body('completed', [item], true));
    return;
  }
  response.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache', connection: 'keep-alive' });
  let sequence = 0;
  const event = (type: string, data: Json) => `event: ${type}\ndata: ${JSON.stringify({ type, sequence_number: sequence++, ...data })}\n\n`;
  await sleep(FIRST_CHUNK_DELAY_MS);
  answer.firstChunkAt = Date.now();
  response.write(event('response.created', { response: body('in_progress', [], false) }));
  if (item.type === 'function_call') {
    response.write(event('response.output_item.added', { output_index: 0, item: { ...item, arguments: '', status: 'in_progress' } }));
    response.write(event('response.function_call_arguments.delta', { output_index: 0, item_id: item.id, delta: args }));
    response.write(event('response.function_call_arguments.done', { output_index: 0, item_id: item.id, arguments: args }));
  } else {
    response.write(event('response.output_item.added', { output_index: 0, item: { ...item, content: [], status: 'in_progress' } }));
    response.write(
      event('response.content_part.added', {
        output_index: 0,
        item_id: item.id,
        content_index: 0,
        part: { type: 'output_text', text: '' },
      }),
    );
    for (const piece of text!.match(/\S+\s*/g) ?? []) {
      response.write(
        event('response.output_text.delta', { output_index: 0, item_id: item.id, content_index: 0, delta: piece, logprobs: [] }),
      );
      await sleep(CHUNK_DELAY_MS);
    }
    response.write(event('response.output_text.done', { output_index: 0, item_id: item.id, content_index: 0, text, logprobs: [] }));
  }
  response.write(event('response.output_item.done', { output_index: 0, item }));
  response.end(event('response.completed', { response: body('completed', [item], true) }));
}

function embeddings(request: Json, response: ServerResponse, answers: FakeAnswer[], receivedAt: number) {
  const inputs = Array.isArray(request.input) ? (request.input as unknown[]) : [request.input];
  const texts = inputs.map((value) => String(value));
  const promptTokens = texts.reduce((n, text) => n + wordsOf(text) + 1, 0);
  const requestedModel = String(request.model);
  answers.push({
    endpoint: 'embeddings',
    requestedModel,
    model: requestedModel,
    stream: false,
    kind: 'embedding',
    usage: { promptTokens, cachedTokens: 0, completionTokens: 0 },
    reported: true,
    receivedAt,
    firstChunkAt: Date.now(),
  });
  const vector = (i: number) => Array.from({ length: 8 }, (_, j) => Math.round(Math.sin(i + j) * 1000) / 1000);
  const base64 = request.encoding_format === 'base64';
  sendJson(response, {
    object: 'list',
    model: requestedModel,
    data: texts.map((_, i) => ({
      object: 'embedding',
      index: i,
      embedding: base64 ? Buffer.from(new Float32Array(vector(i)).buffer).toString('base64') : vector(i),
    })),
    usage: { prompt_tokens: promptTokens, total_tokens: promptTokens },
  });
}

function sendJson(response: ServerResponse, body: unknown, status = 200): void {
  const text = JSON.stringify(body);
  response.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text), 'x-request-id': 'req_fake' });
  response.end(text);
}

/** Starts the fake on 127.0.0.1, port 0 (any free port). */
export async function startFakeOpenAI(): Promise<FakeOpenAI> {
  const answers: FakeAnswer[] = [];
  const server: Server = createServer((request, response) => {
    const receivedAt = Date.now();
    void (async () => {
      try {
        const raw = await readBody(request);
        const body = raw === '' ? {} : (JSON.parse(raw) as Json);
        const path = (request.url ?? '').split('?')[0];
        if (request.method !== 'POST') return sendJson(response, { error: { message: 'not found' } }, 404);
        if (path === '/v1/chat/completions') return await chatCompletions(body, response, answers, receivedAt, raw.length);
        if (path === '/v1/responses') return await responses(body, response, answers, receivedAt, raw.length);
        if (path === '/v1/embeddings') return embeddings(body, response, answers, receivedAt);
        sendJson(response, { error: { message: `no route ${path}`, type: 'invalid_request_error' } }, 404);
      } catch (error) {
        if (!response.headersSent) sendJson(response, { error: { message: String(error), type: 'server_error' } }, 500);
        else response.end();
      }
    })();
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    baseURL: `http://127.0.0.1:${port}/v1`,
    answers,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
