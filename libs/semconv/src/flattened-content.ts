import type { Attributes } from '@spanforge/otlp';

/**
 * Content that instrumentations flatten into one attribute per leaf because OTel attributes
 * cannot nest: OpenLLMetry `gen_ai.prompt.0.role` / `gen_ai.completion.0.tool_calls.0.name`
 * (OpenLLMetry's own, never part of the OTel spec) and OpenInference
 * `llm.input_messages.0.message.role` / `llm.output_messages.0.message.contents.0.message_content.text`.
 * Finding their keys needs a pass over all attribute names, so a pass is made only when a
 * family's index-0 key is present; every emitter starts at message 0 and sets its role or text.
 */
export interface FlattenedFamily {
  /** Key prefix ending with '.', followed by the message index. */
  prefix: string;
  /** Keys whose presence means the family is on the span. */
  sentinels: readonly string[];
}

export const FLATTENED_INPUT_FAMILIES: readonly FlattenedFamily[] = [
  { prefix: 'llm.input_messages.', sentinels: ['llm.input_messages.0.message.role', 'llm.input_messages.0.message.content'] },
  { prefix: 'gen_ai.prompt.', sentinels: ['gen_ai.prompt.0.role', 'gen_ai.prompt.0.content'] },
  { prefix: 'llm.prompts.', sentinels: ['llm.prompts.0.prompt.text'] }, // OpenInference completions API
];

export const FLATTENED_OUTPUT_FAMILIES: readonly FlattenedFamily[] = [
  { prefix: 'llm.output_messages.', sentinels: ['llm.output_messages.0.message.role', 'llm.output_messages.0.message.content'] },
  {
    prefix: 'gen_ai.completion.',
    sentinels: ['gen_ai.completion.0.role', 'gen_ai.completion.0.content', 'gen_ai.completion.0.finish_reason'],
  },
  { prefix: 'llm.choices.', sentinels: ['llm.choices.0.completion.text'] },
];

export function isPresent(attributes: Attributes, family: FlattenedFamily): boolean {
  return family.sentinels.some((key) => key in attributes);
}

function isDigit(code: number): boolean {
  return code >= 0x30 && code <= 0x39;
}

/** The keys of each present family, in one pass over the attribute names. */
export function collectFamilyKeys(attributes: Attributes, families: readonly FlattenedFamily[]): Map<FlattenedFamily, string[]> {
  const found = new Map<FlattenedFamily, string[]>(families.map((family) => [family, []]));
  for (const key of Object.keys(attributes)) {
    const first = key.charCodeAt(0);
    if (first !== 0x67 && first !== 0x6c) continue; // 'g' or 'l': every family prefix starts so
    for (const family of families) {
      if (key.startsWith(family.prefix) && isDigit(key.charCodeAt(family.prefix.length))) {
        found.get(family)?.push(key);
        break;
      }
    }
  }
  return found;
}

function isIndex(segment: string): boolean {
  if (segment === '' || segment.length > 6) return false;
  for (let i = 0; i < segment.length; i++) if (!isDigit(segment.charCodeAt(i))) return false;
  return true;
}

/**
 * Containers built here: Map for objects (a client-sent `__proto__` or `constructor` segment is
 * an ordinary key, and insertion order is kept) and ListNode for arrays. Attribute values are
 * never Maps or ListNodes, so a leaf value that happens to be an object (it belongs to the
 * caller's span) is never descended into or written to.
 */
class ListNode {
  readonly items: unknown[] = [];
}
type Container = Map<string, unknown> | ListNode;

function toJson(node: unknown): string {
  if (node instanceof Map) {
    let text = '';
    for (const [key, value] of node) text += `${text === '' ? '' : ','}${JSON.stringify(key)}:${toJson(value)}`;
    return `{${text}}`;
  }
  if (node instanceof ListNode) {
    let text = '';
    for (let i = 0; i < node.items.length; i++)
      text += `${i === 0 ? '' : ','}${node.items[i] === undefined ? 'null' : toJson(node.items[i])}`;
    return `[${text}]`;
  }
  return JSON.stringify(node ?? null);
}

/**
 * Rebuilds the nested value from flattened keys as JSON text: numeric segments become array
 * positions, others object keys (`0.message.role` → `[{"message":{"role":…}}]`). An index not
 * below the number of keys cannot come from a dense list and is dropped instead of allocating a
 * huge sparse array. Built on Maps and written out directly: plain objects from
 * Object.create(null) made this 5x slower in V8.
 */
export function flattenedJson(attributes: Attributes, prefix: string, keys: readonly string[]): string {
  const root = new ListNode();
  for (const key of keys) {
    const path = key.slice(prefix.length).split('.');
    let node: Container = root;
    for (let i = 0; i < path.length; i++) {
      const segment = path[i];
      const last = i === path.length - 1;
      let child: unknown;
      if (node instanceof ListNode) {
        if (!isIndex(segment)) break; // shape conflict: an object key where a list was started
        const index = Number(segment);
        if (index >= keys.length) break;
        if (last) {
          node.items[index] = attributes[key];
          break;
        }
        child = node.items[index];
        if (!(child instanceof Map || child instanceof ListNode))
          node.items[index] = child = isIndex(path[i + 1]) ? new ListNode() : new Map();
      } else {
        if (last) {
          node.set(segment, attributes[key]);
          break;
        }
        child = node.get(segment);
        if (!(child instanceof Map || child instanceof ListNode))
          node.set(segment, (child = isIndex(path[i + 1]) ? new ListNode() : new Map()));
      }
      node = child as Container;
    }
  }
  return toJson(root);
}
