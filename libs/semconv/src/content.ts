import { setAttribute, type AttributeValue, type Attributes } from '@spanforge/otlp';
import { jsonFragment, looksLikeJsonContainer, toText } from './attribute-read';
import {
  collectFamilyKeys,
  FLATTENED_INPUT_FAMILIES,
  FLATTENED_OUTPUT_FAMILIES,
  flattenedJson,
  isPresent,
  type FlattenedFamily,
} from './flattened-content';

/**
 * Message contents move out of `attributes` into the input/output columns: they are the large,
 * sensitive part of a span (instrumentations capture them only on opt-in) and are stored and
 * redacted apart from the attributes. When a span carries the same content in several conventions
 * (OpenInference input.value and llm.input_messages.*, Vercel ai.prompt and ai.prompt.messages),
 * the first in the order below is kept and all of them leave the attributes.
 */

/**
 * Single-key input sources, most specific first. `gen_ai.input.messages` comes before all of them
 * (system instructions fold into it); the flattened families (flattened-content.ts) rank right
 * after the first two here, and likewise after the first three OUTPUT_KEYS.
 */
const INPUT_KEYS = [
  'langfuse.observation.input',
  'input.value', // OpenInference
  'ai.prompt.messages', // Vercel legacy doGenerate/doStream: the messages sent to the provider
  'ai.prompt', // Vercel legacy wrapper span
  'gen_ai.prompt', // GenAI v1.26-v1.27 flat JSON (deprecated)
  'llm.prompts', // OpenInference completions, older list form
  'gen_ai.tool.call.arguments',
  'ai.toolCall.args', // Vercel legacy ai.toolCall
  'gen_ai.retrieval.query.text',
  'gen_ai.memory.query.text',
  'traceloop.entity.input', // OpenLLMetry workflow/task/agent/tool decorators
  'langfuse.trace.input',
] as const;

const OUTPUT_KEYS = [
  'gen_ai.output.messages',
  'langfuse.observation.output',
  'output.value',
  'gen_ai.completion',
  'gen_ai.tool.call.result',
  'ai.toolCall.result',
  'gen_ai.retrieval.documents',
  'gen_ai.memory.records',
  'traceloop.entity.output',
  'langfuse.trace.output',
] as const;

/** Vercel legacy response parts (AI SDK telemetry docs): a text answer, a generated object, the tool calls requested. */
const VERCEL_RESPONSE_KEYS = ['ai.response.text', 'ai.response.object', 'ai.response.toolCalls'] as const;
const VERCEL_RESPONSE_NAMES = ['text', 'object', 'toolCalls'] as const;

const INPUT_BEFORE_FLATTENED = INPUT_KEYS.slice(0, 2);
const INPUT_AFTER_FLATTENED = INPUT_KEYS.slice(2);
const OUTPUT_BEFORE_FLATTENED = OUTPUT_KEYS.slice(0, 3);
const OUTPUT_AFTER_FLATTENED = OUTPUT_KEYS.slice(3);
const FLATTENED_FAMILIES: readonly FlattenedFamily[] = [...FLATTENED_INPUT_FAMILIES, ...FLATTENED_OUTPUT_FAMILIES];

const SPECIAL_KEYS = ['gen_ai.input.messages', 'gen_ai.system_instructions', ...VERCEL_RESPONSE_KEYS] as const;

export interface ContentMove {
  input: string;
  output: string;
  attributes: Attributes;
}

/**
 * System instructions are given apart from the history (gen_ai.system_instructions, an array of
 * parts). They become the first message of the input, in the history's own schema (the GenAI
 * input-messages JSON schema: `{"role":"system","parts":[...]}`), spliced in as text so the history
 * is not parsed.
 */
export function inputWithSystemInstructions(messages: AttributeValue | undefined, system: AttributeValue | undefined): string {
  if (system === undefined || system === null) return toText(messages);
  const parts =
    typeof system === 'string' && !looksLikeJsonContainer(system)
      ? JSON.stringify([{ type: 'text', content: system }])
      : jsonFragment(system);
  const systemMessage = `{"role":"system","parts":${parts}}`;
  if (messages === undefined || messages === null) return `[${systemMessage}]`;
  const history = toText(messages);
  if (!history.startsWith('[') || !history.endsWith(']')) return `{"system_instructions":${parts},"messages":${jsonFragment(history)}}`;
  return history.slice(1, -1).trim() === '' ? `[${systemMessage}]` : `[${systemMessage},${history.slice(1)}`;
}

/** One part as sent; several as one JSON object (`{"text":"…","toolCalls":[…]}`). */
function vercelResponse(attributes: Attributes): string {
  let single: AttributeValue | undefined;
  let fields = '';
  let count = 0;
  for (let i = 0; i < VERCEL_RESPONSE_KEYS.length; i++) {
    const value = attributes[VERCEL_RESPONSE_KEYS[i]];
    if (value === undefined || value === null || value === '') continue;
    single = value;
    count++;
    // The text is prose even when it looks like JSON; the object and tool calls are JSON text.
    const fragment = i === 0 ? JSON.stringify(toText(value)) : jsonFragment(value);
    fields += `${fields === '' ? '' : ','}"${VERCEL_RESPONSE_NAMES[i]}":${fragment}`;
  }
  if (count === 0) return '';
  return count === 1 ? toText(single) : `{${fields}}`;
}

function firstPresent(attributes: Attributes, keys: readonly string[]): string {
  for (const key of keys) {
    const text = toText(attributes[key]);
    if (text !== '') return text;
  }
  return '';
}

/** The attributes without the moved keys; the caller's object when nothing moved (read-only either way). */
function withoutKeys(attributes: Attributes, removed: ReadonlySet<string>): Attributes {
  if (removed.size === 0) return attributes;
  const kept: Attributes = {};
  for (const key of Object.keys(attributes)) {
    if (!removed.has(key)) setAttribute(kept, key, attributes[key]);
  }
  return kept;
}

/**
 * Input and output text from the flattened families present, in one pass over the attribute
 * names. Their keys always leave the attributes; the JSON is built only for a side still wanted.
 */
function flattenedTexts(
  attributes: Attributes,
  removed: Set<string>,
  want: { input: boolean; output: boolean },
): { input: string; output: string } {
  const present = FLATTENED_FAMILIES.filter((family) => isPresent(attributes, family));
  const texts = { input: '', output: '' };
  if (present.length === 0) return texts;
  for (const [family, keys] of collectFamilyKeys(attributes, present)) {
    for (const key of keys) removed.add(key);
    const side = FLATTENED_INPUT_FAMILIES.includes(family) ? 'input' : 'output';
    if (want[side] && texts[side] === '' && keys.length > 0) texts[side] = flattenedJson(attributes, family.prefix, keys);
  }
  return texts;
}

/** Moves message contents of every supported convention out of the attributes. Never mutates its argument. */
export function moveContent(attributes: Attributes): ContentMove {
  const removed = new Set<string>();
  for (const key of SPECIAL_KEYS) if (key in attributes) removed.add(key);
  for (const key of INPUT_KEYS) if (key in attributes) removed.add(key);
  for (const key of OUTPUT_KEYS) if (key in attributes) removed.add(key);

  const genAiInput =
    removed.has('gen_ai.input.messages') || removed.has('gen_ai.system_instructions')
      ? inputWithSystemInstructions(attributes['gen_ai.input.messages'], attributes['gen_ai.system_instructions'])
      : '';
  // Whole values first; OpenInference's input.value is the whole request, so it comes before its
  // own flattened llm.input_messages.*, which then only need removing.
  const inputFirst = genAiInput || firstPresent(attributes, INPUT_BEFORE_FLATTENED);
  const outputFirst = firstPresent(attributes, OUTPUT_BEFORE_FLATTENED);
  const flat = flattenedTexts(attributes, removed, { input: inputFirst === '', output: outputFirst === '' });
  const input = inputFirst || flat.input || firstPresent(attributes, INPUT_AFTER_FLATTENED);
  const output = outputFirst || flat.output || vercelResponse(attributes) || firstPresent(attributes, OUTPUT_AFTER_FLATTENED);
  return { input, output, attributes: withoutKeys(attributes, removed) };
}
