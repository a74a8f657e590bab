import type { Attributes } from '@spanforge/otlp';
import { firstString } from './attribute-read';

/**
 * The model that answered, response attributes first (GenAI gen_ai.response.model is "the model
 * that actually answered"; OpenInference llm.model_name is the response model when known), then
 * what was requested.
 */
const MODEL_KEYS = [
  'gen_ai.response.model',
  'llm.response.model_name', // OpenInference, when the provider routed to another model
  'llm.model_name',
  'ai.response.model', // Vercel AI SDK legacy, doGenerate/doStream
  'langfuse.observation.model.name',
  'gen_ai.request.model',
  'llm.request.model_name',
  'ai.model.id',
  'embedding.model_name', // OpenInference EMBEDDING spans carry no llm.model_name
  'reranker.model_name',
] as const;

const REQUESTED_MODEL_KEYS = ['gen_ai.request.model', 'llm.request.model_name', 'ai.model.id', 'langfuse.observation.model.name'] as const;

/** Bedrock model vendors (`<vendor>.<model>-v<N>:<M>`) and cross-region inference profile prefixes (`us.anthropic.…`). */
const BEDROCK_VENDORS: ReadonlySet<string> = new Set([
  'anthropic',
  'amazon',
  'meta',
  'cohere',
  'ai21',
  'mistral',
  'stability',
  'deepseek',
  'writer',
  'qwen',
  'openai',
  'twelvelabs',
  'luma',
]);
const BEDROCK_REGIONS: ReadonlySet<string> = new Set(['us', 'eu', 'apac', 'global', 'us-gov', 'jp', 'au', 'ca']);
const BEDROCK_VERSION_SUFFIX = /-v\d+(?::\d+)?(?::\d+k)?$|:\d+$/;

export interface ModelNames {
  model: string;
  modelRequested: string;
  pricingModel: string;
  /** The model id is a Bedrock id (vendor prefix and version suffix): it was served by Bedrock. */
  isBedrockModelId: boolean;
}

/** The Bedrock model without vendor, region and version (`claude-3-5-sonnet-20240620`), or undefined when not a Bedrock id. */
function bedrockBaseModel(name: string): string | undefined {
  let rest = name;
  let dot = rest.indexOf('.');
  if (dot === -1) return undefined;
  if (BEDROCK_REGIONS.has(rest.slice(0, dot))) {
    rest = rest.slice(dot + 1);
    dot = rest.indexOf('.');
    if (dot === -1) return undefined;
  }
  if (!BEDROCK_VENDORS.has(rest.slice(0, dot))) return undefined;
  const model = rest.slice(dot + 1);
  const base = model.replace(BEDROCK_VERSION_SUFFIX, '');
  // `anthropic.claude-v2:1` is Claude 2.1: its version is part of the name.
  return base === 'claude' ? model.replace(/:\d+$/, '') : base;
}

/**
 * The key for the price table: lowercase, routing prefixes removed (`openai/gpt-4o`,
 * `openrouter/anthropic/claude-3.5-sonnet`, `models/gemini-1.5-pro`, Vertex resource paths and
 * Bedrock ARNs all end in the model after the last '/'), Bedrock ids reduced to the vendor's
 * model name. Azure deployment names and date-less aliases stay as they are: the price table
 * decides what they cost.
 */
export function toPricingModel(model: string): { pricingModel: string; isBedrockModelId: boolean } {
  let name = model.trim().toLowerCase();
  const slash = name.lastIndexOf('/');
  if (slash !== -1) name = name.slice(slash + 1);
  const bedrock = bedrockBaseModel(name);
  return bedrock === undefined ? { pricingModel: name, isBedrockModelId: false } : { pricingModel: bedrock, isBedrockModelId: true };
}

/** Model, requested model (the answering model when the span names only one) and pricing key. */
export function readModelNames(attributes: Attributes): ModelNames {
  const model = firstString(attributes, MODEL_KEYS) ?? '';
  const modelRequested = firstString(attributes, REQUESTED_MODEL_KEYS) ?? model;
  return { model, modelRequested, ...toPricingModel(model) };
}
