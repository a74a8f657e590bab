export * from './semconv.model';
export { normalizeSpan } from './normalize';
export {
  classifySpan,
  classifyByConvention,
  GEN_AI_TRACE_TYPES,
  isGenAiTrace,
  isUpgradableRoot,
  LLM_CONVENTIONS,
  ROOT_UPGRADABLE_TYPES,
  rootSpanType,
  type SpanClassification,
} from './span-type';
export { llmScopeConvention } from './llm-scope';
export { toPricingModel, readModelNames, type ModelNames } from './model';
export { canonicalProvider, inferProviderFromModel, readProvider } from './provider';
export { readUsage } from './usage';
export type { UsageReading } from './usage-buckets';
export { readExplicitCost } from './cost';
export { readTtftMs } from './timing';
export { readIds, readIterations, type SpanIds } from './ids';
export { moveContent, type ContentMove } from './content';
export { CHOICE_EVENT, OPERATION_DETAILS_EVENT, genAiEventContent, joinMessageArrays, type GenAiEventContent } from './genai-events';
