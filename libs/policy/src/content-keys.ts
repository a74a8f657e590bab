import { setAttribute, type Attributes } from '@spanforge/otlp';
import { genAiEventContent, moveContent } from '@spanforge/semconv';

export type ContentSide = 'input' | 'output';

/**
 * Which attributes carry message contents, and of which side. The normaliser's own readers decide,
 * so every name it learns is covered here without a second list:
 *
 * - a key is input (output) content when `moveContent` moves a lone value of it into the input
 *   (output): `gen_ai.input.messages`, `input.value`, `ai.prompt`, `traceloop.entity.output`,
 *   `langfuse.observation.input`, `gen_ai.tool.call.arguments`, ...;
 * - flattened messages (`gen_ai.prompt.0.content`, `llm.output_messages.0.message.role`): the
 *   normaliser recognises a family by its first message (index 0), which `moveContent` moves on
 *   its own; the prefix before the index (`gen_ai.prompt.`) is then remembered with its side,
 *   and every key under it (`gen_ai.prompt.3.content`) belongs to that side;
 * - on a GenAI message event (`gen_ai.user.message`, `gen_ai.choice`), the fields
 *   `genAiEventContent` keeps out of the event's facts belong to the side it reads them into.
 *
 * Listed here are only contents the normaliser leaves in the attributes because it does not read
 * them as the span's messages: prompt template variables, guardrail content, embedding inputs,
 * retrieved and reranked documents.
 */
const EXTRA_KEYS: ReadonlyMap<string, ContentSide> = new Map([
  ['llm.prompt_template.variables', 'input'], // OpenInference
  ['reranker.query', 'input'], // OpenInference
  ['ai.value', 'input'], // Vercel AI SDK embed()
  ['ai.values', 'input'], // Vercel AI SDK embedMany()
  ['ai.embedding', 'output'],
  ['ai.embeddings', 'output'],
]);

const EXTRA_PREFIXES: ReadonlyArray<readonly [string, ContentSide]> = [
  ['gen_ai.prompt.variable.', 'input'], // OTel GenAI template variables
  ['gen_ai.guardrail.content.input.', 'input'],
  ['gen_ai.guardrail.content.output.', 'output'],
  ['gen_ai.guardrail.security.content.input.', 'input'],
  ['gen_ai.guardrail.security.content.output.', 'output'],
  ['embedding.embeddings.', 'input'], // OpenInference: the embedded texts (and their vectors)
  ['retrieval.documents.', 'output'], // OpenInference retriever results
  ['reranker.input_documents.', 'input'],
  ['reranker.output_documents.', 'output'],
];

/** A text no real attribute value is, made of characters JSON leaves as they are. */
const PROBE = 'spanforgePolicyContentProbe';

/** Caches hold one entry per attribute name seen; past this many they start again (names a tenant invents are unbounded). */
const MAX_CACHED = 10_000;

interface KeyFacts {
  side: ContentSide | undefined;
  /** For a key with an index segment (`a.b.0.c`), the text before the index (`a.b.`). */
  indexedPrefix: string | undefined;
}

function sideOfProbe(moved: { input: string; output: string }): ContentSide | undefined {
  if (moved.input.includes(PROBE)) return 'input';
  if (moved.output.includes(PROBE)) return 'output';
  return undefined;
}

function extraSide(key: string): ContentSide | undefined {
  const side = EXTRA_KEYS.get(key);
  if (side !== undefined) return side;
  for (const [prefix, prefixSide] of EXTRA_PREFIXES) if (key.startsWith(prefix)) return prefixSide;
  return undefined;
}

/** `gen_ai.prompt.0.content` → `gen_ai.prompt.`; undefined when no dot-separated segment is all digits. */
export function indexedPrefix(key: string): string | undefined {
  for (let dot = key.indexOf('.'); dot >= 0; dot = key.indexOf('.', dot + 1)) {
    let end = dot + 1;
    while (end < key.length && key.charCodeAt(end) >= 0x30 && key.charCodeAt(end) <= 0x39) end++;
    if (end > dot + 1 && (end === key.length || key.charCodeAt(end) === 0x2e)) return key.slice(0, dot + 1);
  }
  return undefined;
}

function remember<K, V>(cache: Map<K, V>, key: K, value: V): V {
  if (cache.size >= MAX_CACHED) cache.clear();
  cache.set(key, value);
  return value;
}

/** Finds the content attributes of spans and events; one per compiled policy, caching what it learns per name. */
export class ContentKeys {
  private readonly keys = new Map<string, KeyFacts>();
  private readonly families = new Map<string, ContentSide>();
  private readonly eventSides = new Map<string, ContentSide | null>();
  private readonly eventFields = new Map<string, boolean>();

  /** The content keys of one attribute map with their sides; `eventName` when the map is a span event's or log event's. */
  contentKeysOf(attributes: Readonly<Record<string, string>>, eventName?: string): Array<[string, ContentSide]> {
    const found: Array<[string, ContentSide]> = [];
    const eventSide = eventName === undefined ? undefined : this.eventSide(eventName);
    let pending: Array<[string, string]> | undefined;
    for (const key of Object.keys(attributes)) {
      const { side: keySide, indexedPrefix: prefix } = this.factsOf(key);
      if (keySide !== undefined) {
        found.push([key, keySide]);
        // An indexed key moved on its own is a family's first message: its prefix is the family's.
        if (prefix !== undefined && !this.families.has(prefix)) remember(this.families, prefix, keySide);
        continue;
      }
      const side =
        (prefix === undefined ? undefined : this.families.get(prefix)) ??
        (eventSide !== undefined && this.isEventField(eventName!, key) ? eventSide : undefined);
      if (side !== undefined) found.push([key, side]);
      else if (prefix !== undefined) (pending ??= []).push([key, prefix]);
    }
    // Later messages of a family whose first message came later in this map.
    for (const [key, prefix] of pending ?? []) {
      const side = this.families.get(prefix);
      if (side !== undefined) found.push([key, side]);
    }
    return found;
  }

  private factsOf(key: string): KeyFacts {
    const cached = this.keys.get(key);
    if (cached !== undefined) return cached;
    const probe: Attributes = {};
    setAttribute(probe, key, PROBE);
    const side = sideOfProbe(moveContent(probe)) ?? extraSide(key);
    return remember(this.keys, key, { side, indexedPrefix: indexedPrefix(key) });
  }

  /** The side a GenAI event's message fields belong to: input for the per-message events, output for a choice. */
  private eventSide(name: string): ContentSide | undefined {
    let side = this.eventSides.get(name);
    if (side === undefined) {
      const read = genAiEventContent(name, { content: PROBE, message: { content: PROBE } }, {});
      side = remember(this.eventSides, name, sideOfProbe(read) ?? null);
    }
    return side ?? undefined;
  }

  /** Whether the event reader treats a field of this name as content rather than as one of the event's facts. */
  private isEventField(name: string, key: string): boolean {
    const id = `${name}\n${key}`;
    let content = this.eventFields.get(id);
    if (content === undefined) {
      const body: Attributes = {};
      setAttribute(body, key, PROBE);
      content = remember(this.eventFields, id, !Object.hasOwn(genAiEventContent(name, body, {}).attributes, key));
    }
    return content;
  }
}
