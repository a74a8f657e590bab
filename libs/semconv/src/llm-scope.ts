/**
 * Instrumentation scopes (tracer names) of LLM libraries. A root span made by one of these
 * tracers belongs to a GenAI trace even when it carries no convention attribute (a pydantic-ai
 * agent run, a LangChain chain). Read only for root spans, so the prefix checks cost nothing
 * per ordinary span. Not exhaustive: a root that escapes this list is upgraded at query time.
 */

/** Python `opentelemetry.instrumentation.<lib>` and JS `@opentelemetry/instrumentation-<lib>` are shared with HTTP and DB instrumentations: only these libs count. */
const OTEL_LLM_LIBS: ReadonlySet<string> = new Set([
  'openai',
  'openai_v2',
  'openai_agents',
  'anthropic',
  'bedrock',
  'vertexai',
  'vertex_ai',
  'google_genai',
  'google_generativeai',
  'cohere',
  'mistralai',
  'groq',
  'ollama',
  'together',
  'replicate',
  'watsonx',
  'alephalpha',
  'writer',
  'langchain',
  'langgraph',
  'llamaindex',
  'llama_index',
  'crewai',
  'haystack',
  'transformers',
  'litellm',
  'agno',
  'mcp',
]);

/** [prefix, convention]: first match wins. Scope names as each library's own source registers its tracer. */
const SCOPE_PREFIXES: ReadonlyArray<readonly [string, string]> = [
  ['openinference.instrumentation', 'openinference'], // Python: openinference.instrumentation.langchain
  ['@arizeai/openinference', 'openinference'], // JS: @arizeai/openinference-instrumentation-openai
  ['traceloop.', 'openllmetry'], // traceloop.tracer (Traceloop SDK decorators)
  ['@traceloop/', 'openllmetry'],
  ['langfuse', 'langfuse'], // langfuse-sdk
  ['pydantic-ai', 'gen_ai'], // pydantic-ai emits GenAI conventions (pydantic/pydantic-ai _instrumentation.py)
  ['pydantic_ai', 'gen_ai'],
  ['logfire.openai', 'gen_ai'], // Logfire's own LLM integrations; plain 'logfire' is a general tracer
  ['logfire.anthropic', 'gen_ai'],
  ['logfire.google_genai', 'gen_ai'],
  ['openlit', 'gen_ai'], // openlit.otel.tracing
  ['gcp.vertex.agent', 'gen_ai'], // Google ADK
  ['strands.telemetry', 'gen_ai'], // Strands Agents
];

/** The library segment after a shared prefix: up to the next '.' in Python names, the whole rest in JS package names. */
function libAfter(scope: string, prefix: string, stop: string | undefined): string | undefined {
  if (!scope.startsWith(prefix)) return undefined;
  const rest = scope.slice(prefix.length);
  const end = stop === undefined ? -1 : rest.indexOf(stop);
  return end === -1 ? rest : rest.slice(0, end);
}

/** The convention a known LLM library's tracer implies, or undefined for any other scope. */
export function llmScopeConvention(scope: string): string | undefined {
  if (scope === '') return undefined;
  if (scope === 'ai') return 'vercel_ai'; // the Vercel AI SDK's tracer name (vercel/ai packages/otel/src/get-tracer.ts)
  for (const [prefix, convention] of SCOPE_PREFIXES) {
    if (scope.startsWith(prefix)) return convention;
  }
  const lib = libAfter(scope, 'opentelemetry.instrumentation.', '.') ?? libAfter(scope, '@opentelemetry/instrumentation-', undefined);
  return lib !== undefined && OTEL_LLM_LIBS.has(lib.replaceAll('-', '_')) ? 'gen_ai' : undefined;
}
