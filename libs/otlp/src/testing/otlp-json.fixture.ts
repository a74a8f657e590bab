/** Helpers to edit OTLP/JSON requests in spec files. */

export type Json = Record<string, unknown>;

/** Every span object of a parsed OTLP/JSON request, to edit in place. */
export function spansOf(request: Json): Json[] {
  return (request.resourceSpans as Json[]).flatMap((resourceSpans) =>
    (resourceSpans.scopeSpans as Json[]).flatMap((scopeSpans) => scopeSpans.spans as Json[]),
  );
}

/** Renames every key lowerCamelCase → snake_case, as the proto field names read. */
export function snakeCased(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(snakeCased);
  if (typeof value !== 'object' || value === null) return value;
  return Object.fromEntries(
    Object.entries(value).map(([key, inner]) => [key.replace(/[A-Z]/g, (letter) => `_${letter.toLowerCase()}`), snakeCased(inner)]),
  );
}
