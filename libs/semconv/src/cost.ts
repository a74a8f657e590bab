import { MAX_SPAN_COST_USD, type Attributes } from '@spanforge/otlp';
import { readJsonObject, readNumber, toNumber } from './attribute-read';

/**
 * Cost attributes (USD) that instrumentations compute themselves; a stated cost wins over the
 * price table. Sources, first found wins:
 * - langfuse.observation.cost_details: JSON map of cost type → USD; `total` when sent, else the
 *   entries are disjoint and summed (Langfuse reduceUsageOrCostDetails).
 * - llm.cost.total (OpenInference spec: "Total cost of the LLM call in USD"), else
 *   llm.cost.prompt + llm.cost.completion.
 * - gen_ai.usage.cost (OpenLIT; Langfuse's extractCostDetails and Laminar's GEN_AI_TOTAL_COST read it too).
 * - operation.cost (pydantic-ai / Logfire, priced with genai-prices: pydantic/pydantic-ai _instrumentation.py).
 */
function numeric(value: unknown): number | undefined {
  return typeof value === 'number' || typeof value === 'string' ? toNumber(value) : undefined;
}

function langfuseCost(a: Attributes): number | undefined {
  if (!('langfuse.observation.cost_details' in a)) return undefined;
  const details = readJsonObject(a, 'langfuse.observation.cost_details');
  if (details === undefined) return undefined;
  const total = Object.hasOwn(details, 'total') ? numeric(details.total) : undefined;
  if (total !== undefined) return total;
  let sum: number | undefined;
  for (const value of Object.values(details)) {
    const n = numeric(value);
    if (n !== undefined) sum = (sum ?? 0) + n;
  }
  return sum;
}

function openInferenceCost(a: Attributes): number | undefined {
  const total = readNumber(a, 'llm.cost.total');
  if (total !== undefined) return total;
  const prompt = readNumber(a, 'llm.cost.prompt');
  const completion = readNumber(a, 'llm.cost.completion');
  return prompt === undefined && completion === undefined ? undefined : (prompt ?? 0) + (completion ?? 0);
}

/** The cost the span states, or undefined. Negative values and values past MAX_SPAN_COST_USD are emitter bugs and are ignored. */
export function readExplicitCost(a: Attributes): number | undefined {
  const cost = langfuseCost(a) ?? openInferenceCost(a) ?? readNumber(a, 'gen_ai.usage.cost') ?? readNumber(a, 'operation.cost');
  return cost !== undefined && cost >= 0 && cost <= MAX_SPAN_COST_USD ? cost : undefined;
}
