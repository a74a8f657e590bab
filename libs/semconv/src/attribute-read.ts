import { tokenCount, type AttributeValue, type Attributes } from '@spanforge/otlp';

/**
 * Typed reads of decoded attribute values. Emitters disagree on types: Logfire sends ints above
 * 2^63-1 as strings (pydantic/logfire OTLP_MAX_INT_SIZE), Langfuse SDKs double-encode some
 * strings, kvlists arrive as objects. Every reader accepts what a real emitter sends and answers undefined otherwise.
 */

/** A non-empty string value; numbers and booleans are rendered (ids are sometimes ints). */
export function readString(attributes: Attributes, key: string): string | undefined {
  const value = attributes[key];
  if (typeof value === 'string') return value === '' ? undefined : value;
  if (typeof value === 'number' || typeof value === 'boolean') return String(value);
  return undefined;
}

/** The first non-empty string among keys, in order. */
export function firstString(attributes: Attributes, keys: readonly string[]): string | undefined {
  for (const key of keys) {
    const value = readString(attributes, key);
    if (value !== undefined) return value;
  }
  return undefined;
}

/** A finite number, from a number or a numeric string. */
export function readNumber(attributes: Attributes, key: string): number | undefined {
  return toNumber(attributes[key]);
}

export function toNumber(value: AttributeValue | undefined): number | undefined {
  if (typeof value === 'number') return Number.isFinite(value) ? value : undefined;
  if (typeof value === 'string' && value !== '') {
    const parsed = Number(value);
    return Number.isFinite(parsed) ? parsed : undefined;
  }
  return undefined;
}

/**
 * A token count, as the store keeps it (tokenCount): fractional counts rounded; negative counts
 * (emitter bugs) and counts past MAX_TOKEN_COUNT are ignored.
 */
export function readCount(attributes: Attributes, key: string): number | undefined {
  return toCount(attributes[key]);
}

/** A token count from a number or a numeric string (readCount's rule, for values found inside JSON objects too). */
export function toCount(value: unknown): number | undefined {
  const n = typeof value === 'number' || typeof value === 'string' ? toNumber(value) : undefined;
  return n === undefined ? undefined : tokenCount(n);
}

/** The first count found among keys, in order (current name first, deprecated names after). */
export function firstCount(attributes: Attributes, keys: readonly string[]): number | undefined {
  for (const key of keys) {
    const value = readCount(attributes, key);
    if (value !== undefined) return value;
  }
  return undefined;
}

/** Text for the input/output columns: strings as sent, structured values as JSON. */
export function toText(value: AttributeValue | undefined): string {
  if (value === undefined || value === null) return '';
  return typeof value === 'string' ? value : JSON.stringify(value);
}

/**
 * A JSON fragment for splicing into a larger JSON text without parsing the value: a string that
 * already looks like a JSON array or object is used as is (content is often tens of KB, and
 * JSON.parse of every message list would dominate the per-span cost); anything else is encoded.
 * A value cut by the decoder's length cap no longer ends with its bracket and is encoded as a
 * string, so the result stays valid JSON.
 */
export function jsonFragment(value: AttributeValue): string {
  if (typeof value === 'string') return looksLikeJsonContainer(value) ? value : JSON.stringify(value);
  return JSON.stringify(value);
}

export function looksLikeJsonContainer(text: string): boolean {
  const first = text.charCodeAt(0);
  const last = text.charCodeAt(text.length - 1);
  return (first === 0x5b && last === 0x5d) || (first === 0x7b && last === 0x7d); // [...] or {...}
}

/**
 * A JSON object attribute (Langfuse usage_details / cost_details): kvlist objects as decoded, or a
 * JSON string, once more JSON-decoded when an older SDK stringified it twice. Undefined when the
 * value is not an object.
 */
export function readJsonObject(attributes: Attributes, key: string): Record<string, unknown> | undefined {
  let value: unknown = attributes[key];
  for (let depth = 0; depth < 2 && typeof value === 'string'; depth++) {
    try {
      value = JSON.parse(value);
    } catch {
      return undefined;
    }
  }
  return value !== null && typeof value === 'object' && !Array.isArray(value) ? (value as Record<string, unknown>) : undefined;
}
