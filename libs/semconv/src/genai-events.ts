import { setAttribute, type AttributeValue, type Attributes } from '@spanforge/otlp';
import { looksLikeJsonContainer, toText } from './attribute-read';
import { inputWithSystemInstructions } from './content';

/*
 * GenAI events: the message contents an instrumentation sends as OTLP log records (or span events)
 * instead of span attributes. Two generations of the GenAI semantic conventions:
 *
 * - One event per message (semconv 1.28–1.36, still the default of the Python OpenAI v2
 *   instrumentation): gen_ai.system.message, gen_ai.user.message, gen_ai.assistant.message and
 *   gen_ai.tool.message carry one input message in their body ({content, tool_calls, id}), and
 *   gen_ai.choice one output message ({index, finish_reason, message: {role, content, tool_calls}}).
 * - One event per call (semconv 1.37+): gen_ai.client.inference.operation.details carries
 *   gen_ai.input.messages, gen_ai.output.messages and gen_ai.system_instructions as attributes,
 *   already in the messages JSON schema.
 *
 * Both become the messages JSON schema the span attributes of 1.37+ use
 * (`[{"role":"user","parts":[{"type":"text","content":"…"}]}]`), so a span's contents read the
 * same whichever way they came. Without content capture the bodies hold no content: such a
 * message adds nothing, and the event keeps only its facts (finish reason, index, tool call id).
 */

/** What one GenAI event gives its span. */
export interface GenAiEventContent {
  /** A JSON array of input messages, or '' when the event carries none. */
  input: string;
  /** A JSON array of output messages, or ''. */
  output: string;
  /** The event's own facts without its contents, for the span's event list. */
  attributes: Attributes;
}

type Json = AttributeValue;
type JsonObject = { [key: string]: Json };

const INPUT_MESSAGE_ROLES: Record<string, string> = {
  'gen_ai.system.message': 'system',
  'gen_ai.user.message': 'user',
  'gen_ai.assistant.message': 'assistant',
  'gen_ai.tool.message': 'tool',
};

export const OPERATION_DETAILS_EVENT = 'gen_ai.client.inference.operation.details';
export const CHOICE_EVENT = 'gen_ai.choice';

const CONTENT_ATTRIBUTES = new Set(['gen_ai.input.messages', 'gen_ai.output.messages', 'gen_ai.system_instructions']);
/** Body fields that are contents; the others (finish_reason, index, id, role) are kept as event facts. */
const CONTENT_FIELDS = new Set(['content', 'tool_calls', 'message']);

/** The messages and facts of one GenAI event (body as decoded, attributes of the record). */
export function genAiEventContent(name: string, body: AttributeValue, attributes: Attributes): GenAiEventContent {
  const facts = eventFacts(body, attributes);
  if (name === OPERATION_DETAILS_EVENT) {
    const source = { ...(isObject(body) ? body : {}), ...attributes };
    return {
      input: messagesWithSystem(source['gen_ai.input.messages'], source['gen_ai.system_instructions']),
      output: messageList(source['gen_ai.output.messages']),
      attributes: facts,
    };
  }
  const role = INPUT_MESSAGE_ROLES[name];
  if (role !== undefined) {
    const message = isObject(body) ? legacyMessage(role, body) : typeof body === 'string' ? textMessage(role, body) : undefined;
    return { input: message ? JSON.stringify([message]) : '', output: '', attributes: facts };
  }
  if (name === CHOICE_EVENT && isObject(body)) {
    const sent = isObject(body.message) ? body.message : {};
    const message = legacyMessage(typeof sent.role === 'string' && sent.role !== '' ? sent.role : 'assistant', sent);
    if (message && typeof body.finish_reason === 'string') message.finish_reason = body.finish_reason;
    return { input: '', output: message ? JSON.stringify([message]) : '', attributes: facts };
  }
  return { input: '', output: '', attributes: facts };
}

/** Joins the message arrays of several events, in order, into one array ('' when none has any). */
export function joinMessageArrays(arrays: readonly string[]): string {
  const items = arrays.map((text) => text.trim()).filter((text) => text.length > 2 && text.startsWith('[') && text.endsWith(']'));
  if (items.length === 0) return '';
  if (items.length === 1) return items[0];
  return `[${items.map((text) => text.slice(1, -1)).join(',')}]`;
}

/** A legacy body ({content, tool_calls, id}) as a messages-schema message; undefined when it holds no content. */
function legacyMessage(role: string, body: JsonObject): JsonObject | undefined {
  const parts: Json[] = [];
  const content = body.content;
  if (role === 'tool') {
    if (content !== undefined && content !== null) {
      const part: JsonObject = { type: 'tool_call_response', response: content };
      if (typeof body.id === 'string') part.id = body.id;
      parts.push(part);
    }
  } else if (typeof content === 'string') {
    if (content !== '') parts.push({ type: 'text', content });
  } else if (Array.isArray(content)) {
    // Multimodal content: its parts as sent (`{type: 'text', text}` in OpenAI's shape).
    for (const part of content) parts.push(part);
  }
  if (Array.isArray(body.tool_calls)) {
    for (const call of body.tool_calls) {
      if (!isObject(call)) continue;
      const fn = isObject(call.function) ? call.function : {};
      const part: JsonObject = { type: 'tool_call' };
      if (typeof call.id === 'string') part.id = call.id;
      if (typeof fn.name === 'string') part.name = fn.name;
      if (fn.arguments !== undefined && fn.arguments !== null) part.arguments = fn.arguments;
      parts.push(part);
    }
  }
  return parts.length > 0 ? { role, parts } : undefined;
}

function textMessage(role: string, text: string): JsonObject | undefined {
  return text === '' ? undefined : { role, parts: [{ type: 'text', content: text }] };
}

/** A message list as sent (structured or JSON text) as JSON text; '' when absent. */
function messageList(value: AttributeValue | undefined): string {
  if (value === undefined || value === null || value === '') return '';
  return typeof value === 'string' && !looksLikeJsonContainer(value) ? JSON.stringify([textMessage('user', value)]) : toText(value);
}

/** Input messages with the system instructions (an array of parts) as a first system message, as span attributes give them. */
function messagesWithSystem(messages: AttributeValue | undefined, system: AttributeValue | undefined): string {
  const history = messageList(messages);
  return system === undefined || system === null || system === '' ? history : inputWithSystemInstructions(history || undefined, system);
}

/** The record's attributes without contents, and the body's scalar facts (finish_reason, index, id, role). */
function eventFacts(body: AttributeValue, attributes: Attributes): Attributes {
  const facts: Attributes = {};
  for (const [key, value] of Object.entries(attributes)) if (!CONTENT_ATTRIBUTES.has(key)) setAttribute(facts, key, value);
  if (isObject(body)) {
    for (const [key, value] of Object.entries(body)) {
      if (CONTENT_FIELDS.has(key) || CONTENT_ATTRIBUTES.has(key)) continue;
      if (typeof value === 'string' || typeof value === 'number' || typeof value === 'boolean') setAttribute(facts, key, value);
    }
  }
  return facts;
}

function isObject(value: AttributeValue | undefined): value is JsonObject {
  return value !== null && typeof value === 'object' && !Array.isArray(value);
}
