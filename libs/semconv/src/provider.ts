import type { Attributes } from '@spanforge/otlp';
import { readString } from './attribute-read';

/**
 * Canonical provider names: every spelling seen from the conventions and SDKs maps to one. Keys
 * are lowercase: OpenLLMetry sends `gen_ai.system` "Anthropic" (its instrumentation-anthropic
 * __init__.py), others send lowercase. The provider is who hosts and bills the call, so
 * Azure-hosted OpenAI is azure_openai, not openai.
 */
const CANONICAL_PROVIDERS = new Map<string, string>([
  ['openai', 'openai'],
  ['azure.ai.openai', 'azure_openai'],
  ['az.ai.openai', 'azure_openai'],
  ['azure_openai', 'azure_openai'],
  ['azure-openai', 'azure_openai'], // Vercel AI SDK provider id
  ['azure', 'azure_openai'], // Vercel @ai-sdk/azure is Azure OpenAI
  ['azure.ai.inference', 'azure_ai_inference'],
  ['az.ai.inference', 'azure_ai_inference'],
  ['anthropic', 'anthropic'],
  ['aws.bedrock', 'aws_bedrock'],
  ['aws_bedrock', 'aws_bedrock'],
  ['bedrock', 'aws_bedrock'],
  ['amazon-bedrock', 'aws_bedrock'],
  ['gcp.vertex_ai', 'google_vertex'],
  ['vertex_ai', 'google_vertex'],
  ['vertexai', 'google_vertex'],
  ['google_vertex', 'google_vertex'],
  ['google-vertex', 'google_vertex'],
  ['google.vertex', 'google_vertex'], // Vercel: google.vertex.chat
  ['gcp.gemini', 'google_gemini'],
  ['gemini', 'google_gemini'],
  ['google_gemini', 'google_gemini'],
  ['google.ai.studio', 'google_gemini'], // OpenLIT
  ['google.generative-ai', 'google_gemini'], // Vercel: google.generative-ai
  ['gcp.gen_ai', 'google'], // either Google API: not decidable
  ['google', 'google'],
  ['mistral_ai', 'mistral'],
  ['mistralai', 'mistral'],
  ['mistral', 'mistral'],
  ['x_ai', 'xai'],
  ['xai', 'xai'],
  ['ibm.watsonx.ai', 'ibm_watsonx'],
  ['ibm.watson.ai', 'ibm_watsonx'], // OpenLIT
  ['watsonx', 'ibm_watsonx'],
  ['moonshot_ai', 'moonshot'],
  ['moonshotai', 'moonshot'],
  ['moonshot', 'moonshot'],
  ['togetherai', 'together'],
  ['together', 'together'],
  ['cohere', 'cohere'],
  ['groq', 'groq'],
  ['deepseek', 'deepseek'],
  ['perplexity', 'perplexity'],
  ['fireworks', 'fireworks'],
  ['cerebras', 'cerebras'],
  ['ollama', 'ollama'],
  ['openrouter', 'openrouter'],
  ['meta', 'meta'],
  ['ai21', 'ai21'],
]);

/** Framework names some instrumentations put in gen_ai.system (OpenLLMetry GenAISystem.LANGCHAIN/CREWAI): not who bills. */
const NOT_PROVIDERS: ReadonlySet<string> = new Set([
  'langchain',
  'crewai',
  'llamaindex',
  'llama_index',
  'haystack',
  'langgraph',
  'autogen',
  'semantic_kernel',
  'unknown',
  '_other',
]);

/** A canonical provider from one attribute value, or undefined for framework names and blanks. */
export function canonicalProvider(raw: string): string | undefined {
  const value = raw.trim().toLowerCase();
  if (value === '' || NOT_PROVIDERS.has(value)) return undefined;
  const exact = CANONICAL_PROVIDERS.get(value);
  if (exact !== undefined) return exact;
  // Dotted provider ids (Vercel `anthropic.messages`, `openai.chat`, `google.vertex.chat`): the
  // longest known head wins (Laminar splits on '.': lmnr-ai/lmnr app-server/src/traces/spans.rs), else the first segment.
  const dot = value.indexOf('.');
  if (dot === -1) return value;
  const secondDot = value.indexOf('.', dot + 1);
  if (secondDot !== -1) {
    const twoSegments = CANONICAL_PROVIDERS.get(value.slice(0, secondDot));
    if (twoSegments !== undefined) return twoSegments;
  }
  const head = value.slice(0, dot);
  if (NOT_PROVIDERS.has(head)) return undefined;
  return CANONICAL_PROVIDERS.get(head) ?? head;
}

/**
 * OpenInference: `llm.provider` is the host (azure, aws, google), `llm.system` the model vendor
 * (OpenInference spec: "azure for Azure-hosted OpenAI"). The host bills, so it wins; OpenInference's own
 * `google` means Vertex and `amazon` means Bedrock.
 */
function openInferenceProvider(attributes: Attributes): string | undefined {
  const host = readString(attributes, 'llm.provider')?.toLowerCase();
  const system = readString(attributes, 'llm.system')?.toLowerCase();
  if (host === 'azure') return system === undefined || system === 'openai' ? 'azure_openai' : 'azure_ai_inference';
  if (host === 'google') return 'google_vertex';
  if (host === 'aws' || host === 'amazon') return 'aws_bedrock';
  if (host !== undefined) {
    const canonical = canonicalProvider(host);
    if (canonical !== undefined) return canonical;
  }
  if (system === 'amazon') return 'aws_bedrock';
  return system === undefined ? undefined : canonicalProvider(system);
}

const PROVIDER_KEYS = ['gen_ai.provider.name', 'gen_ai.system'] as const;

/** The provider the span names, in order: GenAI (current, deprecated), OpenInference, Vercel AI SDK. */
function namedProvider(attributes: Attributes): string | undefined {
  for (const key of PROVIDER_KEYS) {
    const value = readString(attributes, key);
    const canonical = value === undefined ? undefined : canonicalProvider(value);
    if (canonical !== undefined) return canonical;
  }
  const fromOpenInference = openInferenceProvider(attributes);
  if (fromOpenInference !== undefined) return fromOpenInference;
  const vercel = readString(attributes, 'ai.model.provider');
  return vercel === undefined ? undefined : canonicalProvider(vercel);
}

/** Model-name families, checked with startsWith on the pricing model (lowercase, prefixes stripped). */
const MODEL_FAMILIES: ReadonlyArray<readonly [string, string]> = [
  ['gpt-', 'openai'],
  ['chatgpt', 'openai'],
  ['o1', 'openai'],
  ['o3', 'openai'],
  ['o4', 'openai'],
  ['text-embedding-', 'openai'],
  ['davinci', 'openai'],
  ['babbage', 'openai'],
  ['whisper', 'openai'],
  ['dall-e', 'openai'],
  ['claude', 'anthropic'],
  ['gemini', 'google'], // Vertex or AI Studio cannot be told from the name
  ['gemma', 'google'],
  ['mistral', 'mistral'],
  ['mixtral', 'mistral'],
  ['codestral', 'mistral'],
  ['ministral', 'mistral'],
  ['magistral', 'mistral'],
  ['pixtral', 'mistral'],
  ['llama', 'meta'],
  ['deepseek', 'deepseek'],
  ['grok', 'xai'],
  ['command', 'cohere'],
];

/**
 * When no attribute names a provider: a routing prefix naming a known provider
 * (`anthropic/claude-…`), a Bedrock model id (`anthropic.claude-…-v1:0` is served by Bedrock),
 * else the model family.
 */
export function inferProviderFromModel(model: string, pricingModel: string, isBedrockModelId: boolean): string {
  const slash = model.indexOf('/');
  if (slash > 0) {
    const routed = CANONICAL_PROVIDERS.get(model.slice(0, slash).toLowerCase());
    if (routed !== undefined) return routed;
  }
  if (isBedrockModelId) return 'aws_bedrock';
  for (const [prefix, provider] of MODEL_FAMILIES) {
    if (pricingModel.startsWith(prefix)) return provider;
  }
  return '';
}

/** The span's canonical provider: named by an attribute, else inferred from the model. */
export function readProvider(attributes: Attributes, model: string, pricingModel: string, isBedrockModelId: boolean): string {
  return namedProvider(attributes) ?? inferProviderFromModel(model, pricingModel, isBedrockModelId);
}
