import type { ModelPrice } from './price.model';

/**
 * Bundled list prices, USD per 1M tokens, standard (non-batch, non-priority) tier, prompts under the
 * long-context threshold.
 *
 * Sources: each provider's public pricing page and announcements (openai.com/api/pricing,
 * anthropic.com/pricing, ai.google.dev/gemini-api/docs/pricing, mistral.ai/pricing,
 * aws.amazon.com/bedrock/pricing, api-docs.deepseek.com/quick_start/pricing, docs.x.ai), cross-checked
 * against pydantic/genai-prices (prices checked up to 2026-08). Rows marked (2026) come from that
 * catalogue alone; their effectiveFrom is the model's launch day or the day it first appeared there,
 * a day apart at most (a span before a model's first row still gets that row, see PriceTable).
 * Checked again on 2026-11-30 against the catalogue as of 2026-08-21: every (2026) price agrees.
 * deepseek-v4-pro's single row is the launch promotion (75 % off) that was billed until the
 * 2026-06-03 cut made it permanent; the catalogue lists the standard price for those three weeks.
 *
 * To update: add a row (never edit a past row's numbers: spans already priced keep pointing at it);
 * a price change is a new row for the same model and provider with the new effectiveFrom; then bump
 * PRICE_TABLE_VERSION (the day of the change, `.N` for a later change the same day), which is
 * stored with every span's cost as `bundled:<version>`.
 * `npx jest libs/pricing` runs the sanity checks over the whole table.
 *
 * Conventions:
 * - cacheReadPerMTok absent: no cache discount, cache reads cost the input price.
 * - cacheWritePerMTok absent: cache writes are billed as ordinary input (OpenAI, Google, DeepSeek,
 *   Mistral, xAI). Anthropic rows state the 5-minute cache write (1.25x input) and read (0.1x input);
 *   the 1-hour cache (2x input) is not modelled.
 * - Reasoning/thinking tokens are billed at the output price.
 * - Not modelled: long-context tiers (Gemini 2.5 Pro, 3 Pro and 3.1 Pro >200k, Gemini 1.5 >128k,
 *   Claude Sonnet 4.5 >200k, Claude Opus 4.6 and Sonnet 4.6 >200k until 2026-03-13, GPT-5.4,
 *   GPT-5.4 Pro and GPT-5.6 >272k),
 *   batch and priority tiers, DeepSeek off-peak discounts, regional-endpoint surcharges, audio and
 *   image tokens (realtime/audio rows carry text-token prices).
 * - Meta Llama rows are AWS Bedrock on-demand prices (us-east-1): Meta sells no general API at list
 *   price, and other hosts (Together, Groq, Fireworks) differ; projects on those add an override.
 */
export const PRICE_TABLE_VERSION = '2026-11-30.2';

const OPENAI: ModelPrice[] = [
  { model: 'gpt-3.5-turbo', provider: 'openai', aliases: ['gpt-35-turbo'], inputPerMTok: 1.5, outputPerMTok: 2, effectiveFrom: '2023-06-13' },
  // The unversioned alias moved to the 0125 snapshot on 2024-02-16.
  { model: 'gpt-3.5-turbo', provider: 'openai', inputPerMTok: 0.5, outputPerMTok: 1.5, effectiveFrom: '2024-02-16' },
  { model: 'gpt-3.5-turbo-0125', provider: 'openai', inputPerMTok: 0.5, outputPerMTok: 1.5, effectiveFrom: '2024-01-25' },
  { model: 'gpt-3.5-turbo-1106', provider: 'openai', inputPerMTok: 1, outputPerMTok: 2, effectiveFrom: '2023-11-06' },
  { model: 'gpt-3.5-turbo-0613', provider: 'openai', inputPerMTok: 1.5, outputPerMTok: 2, effectiveFrom: '2023-06-13' },
  { model: 'gpt-4', provider: 'openai', inputPerMTok: 30, outputPerMTok: 60, effectiveFrom: '2023-03-14' },
  { model: 'gpt-4-32k', provider: 'openai', inputPerMTok: 60, outputPerMTok: 120, effectiveFrom: '2023-03-14' },
  {
    model: 'gpt-4-turbo',
    provider: 'openai',
    aliases: ['gpt-4-turbo-preview', 'gpt-4-1106-preview', 'gpt-4-0125-preview', 'gpt-4-vision-preview', 'gpt-4-1106-vision-preview'],
    inputPerMTok: 10,
    outputPerMTok: 30,
    effectiveFrom: '2023-11-06',
  },
  { model: 'gpt-4o', provider: 'openai', inputPerMTok: 5, outputPerMTok: 15, effectiveFrom: '2024-05-13' },
  // The unversioned alias moved to the cheaper 2024-08-06 snapshot on 2024-10-02; prompt caching began 2024-10-01.
  { model: 'gpt-4o', provider: 'openai', inputPerMTok: 2.5, outputPerMTok: 10, cacheReadPerMTok: 1.25, effectiveFrom: '2024-10-02' },
  // Pinned snapshots keep their own price whatever the alias points at.
  { model: 'gpt-4o-2024-05-13', provider: 'openai', inputPerMTok: 5, outputPerMTok: 15, effectiveFrom: '2024-05-13' },
  { model: 'gpt-4o-2024-08-06', provider: 'openai', aliases: ['gpt-4o-2024-11-20'], inputPerMTok: 2.5, outputPerMTok: 10, cacheReadPerMTok: 1.25, effectiveFrom: '2024-08-06' },
  { model: 'chatgpt-4o-latest', provider: 'openai', inputPerMTok: 5, outputPerMTok: 15, effectiveFrom: '2024-08-13' },
  { model: 'gpt-4o-mini', provider: 'openai', inputPerMTok: 0.15, outputPerMTok: 0.6, cacheReadPerMTok: 0.075, effectiveFrom: '2024-07-18' },
  { model: 'gpt-4o-realtime-preview', provider: 'openai', inputPerMTok: 5, outputPerMTok: 20, cacheReadPerMTok: 2.5, effectiveFrom: '2024-10-01' },
  { model: 'gpt-4o-mini-realtime-preview', provider: 'openai', inputPerMTok: 0.6, outputPerMTok: 2.4, cacheReadPerMTok: 0.3, effectiveFrom: '2024-12-17' },
  { model: 'gpt-realtime', provider: 'openai', inputPerMTok: 4, outputPerMTok: 16, cacheReadPerMTok: 0.4, effectiveFrom: '2025-08-28' },
  { model: 'gpt-realtime-mini', provider: 'openai', inputPerMTok: 0.6, outputPerMTok: 2.4, cacheReadPerMTok: 0.06, effectiveFrom: '2025-10-06' },
  { model: 'gpt-4.5-preview', provider: 'openai', inputPerMTok: 75, outputPerMTok: 150, cacheReadPerMTok: 37.5, effectiveFrom: '2025-02-27' },
  { model: 'gpt-4.1', provider: 'openai', inputPerMTok: 2, outputPerMTok: 8, cacheReadPerMTok: 0.5, effectiveFrom: '2025-04-14' },
  { model: 'gpt-4.1-mini', provider: 'openai', inputPerMTok: 0.4, outputPerMTok: 1.6, cacheReadPerMTok: 0.1, effectiveFrom: '2025-04-14' },
  { model: 'gpt-4.1-nano', provider: 'openai', inputPerMTok: 0.1, outputPerMTok: 0.4, cacheReadPerMTok: 0.025, effectiveFrom: '2025-04-14' },
  { model: 'o1-preview', provider: 'openai', inputPerMTok: 15, outputPerMTok: 60, cacheReadPerMTok: 7.5, effectiveFrom: '2024-09-12' },
  { model: 'o1', provider: 'openai', inputPerMTok: 15, outputPerMTok: 60, cacheReadPerMTok: 7.5, effectiveFrom: '2024-12-17' },
  { model: 'o1-mini', provider: 'openai', inputPerMTok: 3, outputPerMTok: 12, cacheReadPerMTok: 1.5, effectiveFrom: '2024-09-12' },
  // Cut to the o3-mini price when o3-mini launched.
  { model: 'o1-mini', provider: 'openai', inputPerMTok: 1.1, outputPerMTok: 4.4, cacheReadPerMTok: 0.55, effectiveFrom: '2025-01-31' },
  { model: 'o1-pro', provider: 'openai', inputPerMTok: 150, outputPerMTok: 600, effectiveFrom: '2025-03-19' },
  { model: 'o3-mini', provider: 'openai', inputPerMTok: 1.1, outputPerMTok: 4.4, cacheReadPerMTok: 0.55, effectiveFrom: '2025-01-31' },
  { model: 'o3', provider: 'openai', inputPerMTok: 10, outputPerMTok: 40, cacheReadPerMTok: 2.5, effectiveFrom: '2025-04-16' },
  // OpenAI cut o3 by 80% on 2025-06-10.
  { model: 'o3', provider: 'openai', inputPerMTok: 2, outputPerMTok: 8, cacheReadPerMTok: 0.5, effectiveFrom: '2025-06-10' },
  { model: 'o3-pro', provider: 'openai', inputPerMTok: 20, outputPerMTok: 80, effectiveFrom: '2025-06-10' },
  { model: 'o3-deep-research', provider: 'openai', inputPerMTok: 10, outputPerMTok: 40, cacheReadPerMTok: 2.5, effectiveFrom: '2025-06-26' },
  { model: 'o4-mini', provider: 'openai', inputPerMTok: 1.1, outputPerMTok: 4.4, cacheReadPerMTok: 0.275, effectiveFrom: '2025-04-16' },
  { model: 'o4-mini-deep-research', provider: 'openai', inputPerMTok: 2, outputPerMTok: 8, cacheReadPerMTok: 0.5, effectiveFrom: '2025-06-26' },
  { model: 'codex-mini', provider: 'openai', inputPerMTok: 1.5, outputPerMTok: 6, cacheReadPerMTok: 0.375, effectiveFrom: '2025-05-16' },
  { model: 'gpt-5', provider: 'openai', aliases: ['gpt-5-chat', 'gpt-5-codex'], inputPerMTok: 1.25, outputPerMTok: 10, cacheReadPerMTok: 0.125, effectiveFrom: '2025-08-07' },
  { model: 'gpt-5-mini', provider: 'openai', inputPerMTok: 0.25, outputPerMTok: 2, cacheReadPerMTok: 0.025, effectiveFrom: '2025-08-07' },
  { model: 'gpt-5-nano', provider: 'openai', inputPerMTok: 0.05, outputPerMTok: 0.4, cacheReadPerMTok: 0.005, effectiveFrom: '2025-08-07' },
  { model: 'gpt-5-pro', provider: 'openai', inputPerMTok: 15, outputPerMTok: 120, effectiveFrom: '2025-10-06' },
  { model: 'gpt-5.1', provider: 'openai', aliases: ['gpt-5.1-codex', 'gpt-5.1-codex-max', 'gpt-5.1-chat'], inputPerMTok: 1.25, outputPerMTok: 10, cacheReadPerMTok: 0.125, effectiveFrom: '2025-11-13' },
  { model: 'gpt-5.1-codex-mini', provider: 'openai', inputPerMTok: 0.25, outputPerMTok: 2, cacheReadPerMTok: 0.025, effectiveFrom: '2025-11-13' },
  { model: 'gpt-5.2', provider: 'openai', inputPerMTok: 1.75, outputPerMTok: 14, cacheReadPerMTok: 0.175, effectiveFrom: '2025-12-11' },
  { model: 'gpt-5.2-pro', provider: 'openai', inputPerMTok: 21, outputPerMTok: 168, effectiveFrom: '2025-12-11' },
  // (2026)
  { model: 'gpt-5.3', provider: 'openai', aliases: ['gpt-5.3-codex'], inputPerMTok: 1.75, outputPerMTok: 14, cacheReadPerMTok: 0.175, effectiveFrom: '2026-03-02' },
  { model: 'gpt-5.4', provider: 'openai', inputPerMTok: 2.5, outputPerMTok: 15, cacheReadPerMTok: 0.25, effectiveFrom: '2026-03-05' },
  { model: 'gpt-5.4-pro', provider: 'openai', inputPerMTok: 30, outputPerMTok: 180, effectiveFrom: '2026-03-05' },
  { model: 'gpt-5.4-mini', provider: 'openai', inputPerMTok: 0.75, outputPerMTok: 4.5, cacheReadPerMTok: 0.075, effectiveFrom: '2026-03-17' },
  { model: 'gpt-5.4-nano', provider: 'openai', inputPerMTok: 0.2, outputPerMTok: 1.25, cacheReadPerMTok: 0.02, effectiveFrom: '2026-03-17' },
  { model: 'gpt-5.5', provider: 'openai', inputPerMTok: 5, outputPerMTok: 30, cacheReadPerMTok: 0.5, effectiveFrom: '2026-04-23' },
  { model: 'gpt-5.5-pro', provider: 'openai', inputPerMTok: 30, outputPerMTok: 180, effectiveFrom: '2026-04-23' },
  // GPT-5.6 bills cache writes at 1.25x input; Terra and Luna were cut on 2026-07-30.
  { model: 'gpt-5.6-sol', provider: 'openai', aliases: ['gpt-5.6'], inputPerMTok: 5, outputPerMTok: 30, cacheReadPerMTok: 0.5, cacheWritePerMTok: 6.25, effectiveFrom: '2026-07-09' },
  { model: 'gpt-5.6-terra', provider: 'openai', inputPerMTok: 2.5, outputPerMTok: 15, cacheReadPerMTok: 0.25, cacheWritePerMTok: 3.125, effectiveFrom: '2026-07-09' },
  { model: 'gpt-5.6-terra', provider: 'openai', inputPerMTok: 2, outputPerMTok: 12, cacheReadPerMTok: 0.2, cacheWritePerMTok: 2.5, effectiveFrom: '2026-07-30' },
  { model: 'gpt-5.6-luna', provider: 'openai', inputPerMTok: 1, outputPerMTok: 6, cacheReadPerMTok: 0.1, cacheWritePerMTok: 1.25, effectiveFrom: '2026-07-09' },
  { model: 'gpt-5.6-luna', provider: 'openai', inputPerMTok: 0.2, outputPerMTok: 1.2, cacheReadPerMTok: 0.02, cacheWritePerMTok: 0.25, effectiveFrom: '2026-07-30' },
  // Without rows of their own these were priced by prefix as gpt-5.4 and gpt-realtime. Text tokens only.
  { model: 'gpt-5.4-image-2', provider: 'openai', inputPerMTok: 8, outputPerMTok: 15, cacheReadPerMTok: 2, effectiveFrom: '2026-06-15' },
  { model: 'gpt-realtime-2', provider: 'openai', aliases: ['gpt-realtime-2.1'], inputPerMTok: 4, outputPerMTok: 24, cacheReadPerMTok: 0.4, effectiveFrom: '2026-07-06' },
  { model: 'gpt-image-2', provider: 'openai', inputPerMTok: 5, outputPerMTok: 30, cacheReadPerMTok: 1.25, effectiveFrom: '2026-07-06' },
  { model: 'text-embedding-3-small', provider: 'openai', kind: 'embedding', inputPerMTok: 0.02, outputPerMTok: 0, effectiveFrom: '2024-01-25' },
  { model: 'text-embedding-3-large', provider: 'openai', kind: 'embedding', inputPerMTok: 0.13, outputPerMTok: 0, effectiveFrom: '2024-01-25' },
  { model: 'text-embedding-ada-002', provider: 'openai', kind: 'embedding', inputPerMTok: 0.1, outputPerMTok: 0, effectiveFrom: '2022-12-15' },
];

// Anthropic: cache write (5 min) = 1.25x input, cache read = 0.1x input, except Claude 3 Haiku's
// published $0.30 / $0.03.
const ANTHROPIC: ModelPrice[] = [
  { model: 'claude-3-haiku', provider: 'anthropic', inputPerMTok: 0.25, outputPerMTok: 1.25, cacheReadPerMTok: 0.03, cacheWritePerMTok: 0.3, effectiveFrom: '2024-03-13' },
  { model: 'claude-3-sonnet', provider: 'anthropic', inputPerMTok: 3, outputPerMTok: 15, cacheReadPerMTok: 0.3, cacheWritePerMTok: 3.75, effectiveFrom: '2024-03-04' },
  { model: 'claude-3-opus', provider: 'anthropic', inputPerMTok: 15, outputPerMTok: 75, cacheReadPerMTok: 1.5, cacheWritePerMTok: 18.75, effectiveFrom: '2024-03-04' },
  { model: 'claude-3-5-sonnet', provider: 'anthropic', inputPerMTok: 3, outputPerMTok: 15, cacheReadPerMTok: 0.3, cacheWritePerMTok: 3.75, effectiveFrom: '2024-06-20' },
  { model: 'claude-3-5-haiku', provider: 'anthropic', inputPerMTok: 1, outputPerMTok: 5, cacheReadPerMTok: 0.1, cacheWritePerMTok: 1.25, effectiveFrom: '2024-11-04' },
  // Cut about a month after launch (announced at AWS re:Invent; the day is approximate).
  { model: 'claude-3-5-haiku', provider: 'anthropic', inputPerMTok: 0.8, outputPerMTok: 4, cacheReadPerMTok: 0.08, cacheWritePerMTok: 1, effectiveFrom: '2024-12-03' },
  { model: 'claude-3-7-sonnet', provider: 'anthropic', inputPerMTok: 3, outputPerMTok: 15, cacheReadPerMTok: 0.3, cacheWritePerMTok: 3.75, effectiveFrom: '2025-02-24' },
  { model: 'claude-sonnet-4', provider: 'anthropic', aliases: ['claude-4-sonnet'], inputPerMTok: 3, outputPerMTok: 15, cacheReadPerMTok: 0.3, cacheWritePerMTok: 3.75, effectiveFrom: '2025-05-22' },
  { model: 'claude-opus-4', provider: 'anthropic', aliases: ['claude-4-opus'], inputPerMTok: 15, outputPerMTok: 75, cacheReadPerMTok: 1.5, cacheWritePerMTok: 18.75, effectiveFrom: '2025-05-22' },
  { model: 'claude-opus-4-1', provider: 'anthropic', aliases: ['claude-4.1-opus'], inputPerMTok: 15, outputPerMTok: 75, cacheReadPerMTok: 1.5, cacheWritePerMTok: 18.75, effectiveFrom: '2025-08-05' },
  { model: 'claude-sonnet-4-5', provider: 'anthropic', aliases: ['claude-4.5-sonnet'], inputPerMTok: 3, outputPerMTok: 15, cacheReadPerMTok: 0.3, cacheWritePerMTok: 3.75, effectiveFrom: '2025-09-29' },
  { model: 'claude-haiku-4-5', provider: 'anthropic', aliases: ['claude-4.5-haiku'], inputPerMTok: 1, outputPerMTok: 5, cacheReadPerMTok: 0.1, cacheWritePerMTok: 1.25, effectiveFrom: '2025-10-15' },
  { model: 'claude-opus-4-5', provider: 'anthropic', aliases: ['claude-4.5-opus'], inputPerMTok: 5, outputPerMTok: 25, cacheReadPerMTok: 0.5, cacheWritePerMTok: 6.25, effectiveFrom: '2025-11-24' },
  // (2026)
  { model: 'claude-opus-4-6', provider: 'anthropic', aliases: ['claude-4.6-opus'], inputPerMTok: 5, outputPerMTok: 25, cacheReadPerMTok: 0.5, cacheWritePerMTok: 6.25, effectiveFrom: '2026-02-05' },
  { model: 'claude-sonnet-4-6', provider: 'anthropic', aliases: ['claude-4.6-sonnet'], inputPerMTok: 3, outputPerMTok: 15, cacheReadPerMTok: 0.3, cacheWritePerMTok: 3.75, effectiveFrom: '2026-02-17' },
  { model: 'claude-opus-4-7', provider: 'anthropic', aliases: ['claude-4.7-opus'], inputPerMTok: 5, outputPerMTok: 25, cacheReadPerMTok: 0.5, cacheWritePerMTok: 6.25, effectiveFrom: '2026-04-16' },
  { model: 'claude-opus-4-8', provider: 'anthropic', aliases: ['claude-4.8-opus'], inputPerMTok: 5, outputPerMTok: 25, cacheReadPerMTok: 0.5, cacheWritePerMTok: 6.25, effectiveFrom: '2026-05-28' },
  { model: 'claude-fable-5', provider: 'anthropic', inputPerMTok: 10, outputPerMTok: 50, cacheReadPerMTok: 1, cacheWritePerMTok: 12.5, effectiveFrom: '2026-06-09' },
  // Introductory price until 2026-08-31, standard price from 2026-09-01.
  { model: 'claude-sonnet-5', provider: 'anthropic', aliases: ['claude-5-sonnet'], inputPerMTok: 2, outputPerMTok: 10, cacheReadPerMTok: 0.2, cacheWritePerMTok: 2.5, effectiveFrom: '2026-06-30' },
  { model: 'claude-sonnet-5', provider: 'anthropic', inputPerMTok: 3, outputPerMTok: 15, cacheReadPerMTok: 0.3, cacheWritePerMTok: 3.75, effectiveFrom: '2026-09-01' },
  { model: 'claude-opus-5', provider: 'anthropic', aliases: ['claude-5-opus'], inputPerMTok: 5, outputPerMTok: 25, cacheReadPerMTok: 0.5, cacheWritePerMTok: 6.25, effectiveFrom: '2026-07-24' },
];

// Gemini API (paid tier) list prices, which Vertex AI matches for these models. Google bills cache
// storage per hour, not per written token, so cache writes cost the input price. Cache-read prices are
// the current ones (Google moved them to 10% of input during 2025; that change is not dated here).
const GOOGLE: ModelPrice[] = [
  { model: 'gemini-1.5-pro', provider: 'google_gemini', inputPerMTok: 3.5, outputPerMTok: 10.5, cacheReadPerMTok: 0.875, effectiveFrom: '2024-05-14' },
  // Google cut Gemini 1.5 Pro by ~60% on 2024-10-01 and 1.5 Flash by ~78% on 2024-08-12.
  { model: 'gemini-1.5-pro', provider: 'google_gemini', inputPerMTok: 1.25, outputPerMTok: 5, cacheReadPerMTok: 0.3125, effectiveFrom: '2024-10-01' },
  { model: 'gemini-1.5-flash', provider: 'google_gemini', inputPerMTok: 0.35, outputPerMTok: 1.05, cacheReadPerMTok: 0.0875, effectiveFrom: '2024-05-14' },
  { model: 'gemini-1.5-flash', provider: 'google_gemini', inputPerMTok: 0.075, outputPerMTok: 0.3, cacheReadPerMTok: 0.01875, effectiveFrom: '2024-08-12' },
  { model: 'gemini-1.5-flash-8b', provider: 'google_gemini', inputPerMTok: 0.0375, outputPerMTok: 0.15, cacheReadPerMTok: 0.01, effectiveFrom: '2024-10-03' },
  { model: 'gemini-2.0-flash', provider: 'google_gemini', inputPerMTok: 0.1, outputPerMTok: 0.4, cacheReadPerMTok: 0.025, effectiveFrom: '2025-02-05' },
  { model: 'gemini-2.0-flash-lite', provider: 'google_gemini', inputPerMTok: 0.075, outputPerMTok: 0.3, effectiveFrom: '2025-02-25' },
  { model: 'gemini-2.5-pro', provider: 'google_gemini', inputPerMTok: 1.25, outputPerMTok: 10, cacheReadPerMTok: 0.125, effectiveFrom: '2025-03-25' },
  // The dated 2.5 Flash previews (04-17, 05-20) had their own, lower price (non-thinking output rate;
  // the $3.50 thinking rate is not modelled). The 09-2025 preview is priced like GA Flash.
  { model: 'gemini-2.5-flash-preview', provider: 'google_gemini', inputPerMTok: 0.15, outputPerMTok: 0.6, cacheReadPerMTok: 0.0375, effectiveFrom: '2025-04-17' },
  { model: 'gemini-2.5-flash', provider: 'google_gemini', aliases: ['gemini-2.5-flash-preview-09-2025'], inputPerMTok: 0.3, outputPerMTok: 2.5, cacheReadPerMTok: 0.03, effectiveFrom: '2025-06-17' },
  { model: 'gemini-2.5-flash-lite', provider: 'google_gemini', inputPerMTok: 0.1, outputPerMTok: 0.4, cacheReadPerMTok: 0.01, effectiveFrom: '2025-06-17' },
  { model: 'gemini-3-pro-preview', provider: 'google_gemini', aliases: ['gemini-3-pro'], inputPerMTok: 2, outputPerMTok: 12, cacheReadPerMTok: 0.2, effectiveFrom: '2025-11-18' },
  { model: 'gemini-3-flash-preview', provider: 'google_gemini', aliases: ['gemini-3-flash'], inputPerMTok: 0.5, outputPerMTok: 3, cacheReadPerMTok: 0.05, effectiveFrom: '2025-12-17' },
  // (2026)
  { model: 'gemini-3.1-pro-preview', provider: 'google_gemini', aliases: ['gemini-3.1-pro'], inputPerMTok: 2, outputPerMTok: 12, cacheReadPerMTok: 0.2, effectiveFrom: '2026-02-25' },
  { model: 'gemini-3.1-flash-lite', provider: 'google_gemini', inputPerMTok: 0.25, outputPerMTok: 1.5, cacheReadPerMTok: 0.025, effectiveFrom: '2026-03-03' },
  { model: 'gemini-3.5-flash', provider: 'google_gemini', inputPerMTok: 1.5, outputPerMTok: 9, cacheReadPerMTok: 0.15, effectiveFrom: '2026-05-19' },
  { model: 'gemini-3.5-flash-lite', provider: 'google_gemini', inputPerMTok: 0.3, outputPerMTok: 2.5, cacheReadPerMTok: 0.03, effectiveFrom: '2026-07-22' },
  // Introductory prices until 2026-12-31. The standard ones announced from 2027-01-01 (1.5 / 7.5,
  // cache read 0.15) get their rows then: the table holds no row after its version.
  { model: 'gemini-3.6-flash', provider: 'google_gemini', inputPerMTok: 0.75, outputPerMTok: 3.75, cacheReadPerMTok: 0.075, effectiveFrom: '2026-07-22' },
  { model: 'gemini-3.7-flash', provider: 'google_gemini', inputPerMTok: 0.75, outputPerMTok: 3.75, cacheReadPerMTok: 0.075, effectiveFrom: '2026-08-13' },
];

// La Plateforme. The `-latest` aliases move between generations, hence the dated rows; Mistral cut
// most prices on 2024-09-17 and introduced cache reads with the Mistral 3 family (2025-12).
const MISTRAL: ModelPrice[] = [
  { model: 'mistral-large', provider: 'mistral', inputPerMTok: 8, outputPerMTok: 24, effectiveFrom: '2024-02-26' },
  { model: 'mistral-large', provider: 'mistral', inputPerMTok: 2, outputPerMTok: 6, effectiveFrom: '2024-09-17' },
  // mistral-large-latest became Mistral Large 3 (2512).
  { model: 'mistral-large', provider: 'mistral', inputPerMTok: 0.5, outputPerMTok: 1.5, cacheReadPerMTok: 0.05, effectiveFrom: '2025-12-02' },
  { model: 'mistral-large-2411', provider: 'mistral', aliases: ['mistral-large-2407'], inputPerMTok: 3, outputPerMTok: 9, effectiveFrom: '2024-07-24' },
  { model: 'mistral-large-2411', provider: 'mistral', inputPerMTok: 2, outputPerMTok: 6, effectiveFrom: '2024-09-17' },
  { model: 'mistral-medium', provider: 'mistral', inputPerMTok: 2.7, outputPerMTok: 8.1, effectiveFrom: '2023-12-11' },
  { model: 'mistral-medium', provider: 'mistral', inputPerMTok: 0.4, outputPerMTok: 2, effectiveFrom: '2025-05-07' },
  { model: 'mistral-small', provider: 'mistral', inputPerMTok: 2, outputPerMTok: 6, effectiveFrom: '2024-02-26' },
  { model: 'mistral-small', provider: 'mistral', inputPerMTok: 0.2, outputPerMTok: 0.6, effectiveFrom: '2024-09-17' },
  { model: 'mistral-small', provider: 'mistral', inputPerMTok: 0.1, outputPerMTok: 0.3, effectiveFrom: '2025-01-30' },
  // (2026) Priced as mistral-small by snapshot stripping without its own row.
  { model: 'mistral-small-2603', provider: 'mistral', inputPerMTok: 0.15, outputPerMTok: 0.6, cacheReadPerMTok: 0.015, effectiveFrom: '2026-06-15' },
  { model: 'codestral', provider: 'mistral', inputPerMTok: 1, outputPerMTok: 3, effectiveFrom: '2024-05-29' },
  { model: 'codestral', provider: 'mistral', inputPerMTok: 0.2, outputPerMTok: 0.6, effectiveFrom: '2024-09-17' },
  { model: 'codestral', provider: 'mistral', inputPerMTok: 0.3, outputPerMTok: 0.9, effectiveFrom: '2025-01-13' },
  { model: 'open-mistral-nemo', provider: 'mistral', aliases: ['mistral-nemo'], inputPerMTok: 0.3, outputPerMTok: 0.3, effectiveFrom: '2024-07-18' },
  { model: 'open-mistral-nemo', provider: 'mistral', inputPerMTok: 0.15, outputPerMTok: 0.15, effectiveFrom: '2024-09-17' },
  { model: 'open-mistral-7b', provider: 'mistral', aliases: ['mistral-7b', 'mistral-tiny'], inputPerMTok: 0.25, outputPerMTok: 0.25, effectiveFrom: '2023-12-11' },
  { model: 'open-mixtral-8x7b', provider: 'mistral', aliases: ['mixtral-8x7b'], inputPerMTok: 0.7, outputPerMTok: 0.7, effectiveFrom: '2023-12-11' },
  { model: 'open-mixtral-8x22b', provider: 'mistral', aliases: ['mixtral-8x22b'], inputPerMTok: 2, outputPerMTok: 6, effectiveFrom: '2024-04-17' },
  { model: 'ministral-8b', provider: 'mistral', inputPerMTok: 0.1, outputPerMTok: 0.1, effectiveFrom: '2024-10-16' },
  { model: 'ministral-3b', provider: 'mistral', inputPerMTok: 0.04, outputPerMTok: 0.04, effectiveFrom: '2024-10-16' },
  { model: 'pixtral-12b', provider: 'mistral', inputPerMTok: 0.15, outputPerMTok: 0.15, effectiveFrom: '2024-09-17' },
  { model: 'pixtral-large', provider: 'mistral', inputPerMTok: 2, outputPerMTok: 6, effectiveFrom: '2024-11-18' },
  { model: 'devstral-small', provider: 'mistral', inputPerMTok: 0.1, outputPerMTok: 0.3, effectiveFrom: '2025-05-21' },
  { model: 'devstral-medium', provider: 'mistral', inputPerMTok: 0.4, outputPerMTok: 2, effectiveFrom: '2025-07-10' },
  { model: 'magistral-small', provider: 'mistral', inputPerMTok: 0.5, outputPerMTok: 1.5, effectiveFrom: '2025-06-10' },
  { model: 'magistral-medium', provider: 'mistral', inputPerMTok: 2, outputPerMTok: 5, effectiveFrom: '2025-06-10' },
];

// AWS Bedrock on-demand, us-east-1 (see header). Aliases cover Bedrock (`llama3-1-70b-instruct-v1:0`
// once `meta.` is stripped) and Hugging Face (`Meta-Llama-3.1-70B-Instruct`) spellings.
const META: ModelPrice[] = [
  { model: 'llama-3-8b', provider: 'aws_bedrock', aliases: ['llama3-8b', 'meta-llama-3-8b'], inputPerMTok: 0.3, outputPerMTok: 0.6, effectiveFrom: '2024-04-23' },
  { model: 'llama-3-70b', provider: 'aws_bedrock', aliases: ['llama3-70b', 'meta-llama-3-70b'], inputPerMTok: 2.65, outputPerMTok: 3.5, effectiveFrom: '2024-04-23' },
  { model: 'llama-3.1-8b', provider: 'aws_bedrock', aliases: ['llama3.1-8b', 'meta-llama-3.1-8b'], inputPerMTok: 0.22, outputPerMTok: 0.22, effectiveFrom: '2024-07-23' },
  { model: 'llama-3.1-70b', provider: 'aws_bedrock', aliases: ['llama3.1-70b', 'meta-llama-3.1-70b'], inputPerMTok: 0.72, outputPerMTok: 0.72, effectiveFrom: '2024-07-23' },
  { model: 'llama-3.2-1b', provider: 'aws_bedrock', aliases: ['llama3.2-1b'], inputPerMTok: 0.1, outputPerMTok: 0.1, effectiveFrom: '2024-09-25' },
  { model: 'llama-3.2-3b', provider: 'aws_bedrock', aliases: ['llama3.2-3b'], inputPerMTok: 0.15, outputPerMTok: 0.15, effectiveFrom: '2024-09-25' },
  { model: 'llama-3.2-11b', provider: 'aws_bedrock', aliases: ['llama3.2-11b'], inputPerMTok: 0.16, outputPerMTok: 0.16, effectiveFrom: '2024-09-25' },
  { model: 'llama-3.2-90b', provider: 'aws_bedrock', aliases: ['llama3.2-90b'], inputPerMTok: 0.72, outputPerMTok: 0.72, effectiveFrom: '2024-09-25' },
  { model: 'llama-3.3-70b', provider: 'aws_bedrock', aliases: ['llama3.3-70b'], inputPerMTok: 0.72, outputPerMTok: 0.72, effectiveFrom: '2024-12-19' },
  { model: 'llama-4-scout', provider: 'aws_bedrock', aliases: ['llama4-scout'], inputPerMTok: 0.17, outputPerMTok: 0.66, effectiveFrom: '2025-04-28' },
  { model: 'llama-4-maverick', provider: 'aws_bedrock', aliases: ['llama4-maverick'], inputPerMTok: 0.24, outputPerMTok: 0.97, effectiveFrom: '2025-04-28' },
];

// DeepSeek bills cache misses at the input price (no separate write price). Prices changed with each
// model generation behind the same two API names; the V3 launch promotion ran to 2025-02-08.
const DEEPSEEK: ModelPrice[] = [
  { model: 'deepseek-chat', provider: 'deepseek', aliases: ['deepseek-v3'], inputPerMTok: 0.14, outputPerMTok: 0.28, cacheReadPerMTok: 0.014, effectiveFrom: '2024-12-26' },
  { model: 'deepseek-chat', provider: 'deepseek', inputPerMTok: 0.27, outputPerMTok: 1.1, cacheReadPerMTok: 0.07, effectiveFrom: '2025-02-08' },
  // V3.1 unified chat and reasoner prices (2025-09-05), V3.2-Exp halved them (2025-09-29).
  { model: 'deepseek-chat', provider: 'deepseek', inputPerMTok: 0.56, outputPerMTok: 1.68, cacheReadPerMTok: 0.07, effectiveFrom: '2025-09-05' },
  { model: 'deepseek-chat', provider: 'deepseek', inputPerMTok: 0.28, outputPerMTok: 0.42, cacheReadPerMTok: 0.028, effectiveFrom: '2025-09-29' },
  { model: 'deepseek-reasoner', provider: 'deepseek', aliases: ['deepseek-r1'], inputPerMTok: 0.55, outputPerMTok: 2.19, cacheReadPerMTok: 0.14, effectiveFrom: '2025-01-20' },
  { model: 'deepseek-reasoner', provider: 'deepseek', inputPerMTok: 0.56, outputPerMTok: 1.68, cacheReadPerMTok: 0.07, effectiveFrom: '2025-09-05' },
  { model: 'deepseek-reasoner', provider: 'deepseek', inputPerMTok: 0.28, outputPerMTok: 0.42, cacheReadPerMTok: 0.028, effectiveFrom: '2025-09-29' },
  // (2026)
  { model: 'deepseek-v4-flash', provider: 'deepseek', inputPerMTok: 0.14, outputPerMTok: 0.28, cacheReadPerMTok: 0.0028, effectiveFrom: '2026-05-14' },
  { model: 'deepseek-v4-pro', provider: 'deepseek', inputPerMTok: 0.435, outputPerMTok: 0.87, cacheReadPerMTok: 0.003625, effectiveFrom: '2026-05-14' },
];

// xAI bills cache writes as input. Grok 4's doubled price above 128k context is not modelled.
const XAI: ModelPrice[] = [
  { model: 'grok-2', provider: 'xai', inputPerMTok: 2, outputPerMTok: 10, effectiveFrom: '2024-12-12' },
  { model: 'grok-3', provider: 'xai', inputPerMTok: 3, outputPerMTok: 15, cacheReadPerMTok: 0.75, effectiveFrom: '2025-04-09' },
  { model: 'grok-3-fast', provider: 'xai', inputPerMTok: 5, outputPerMTok: 25, cacheReadPerMTok: 1.25, effectiveFrom: '2025-04-09' },
  { model: 'grok-3-mini', provider: 'xai', inputPerMTok: 0.3, outputPerMTok: 0.5, cacheReadPerMTok: 0.075, effectiveFrom: '2025-04-09' },
  { model: 'grok-3-mini-fast', provider: 'xai', inputPerMTok: 0.6, outputPerMTok: 4, cacheReadPerMTok: 0.15, effectiveFrom: '2025-04-09' },
  { model: 'grok-4', provider: 'xai', inputPerMTok: 3, outputPerMTok: 15, cacheReadPerMTok: 0.75, effectiveFrom: '2025-07-09' },
  { model: 'grok-code-fast-1', provider: 'xai', aliases: ['grok-code-fast'], inputPerMTok: 0.2, outputPerMTok: 1.5, cacheReadPerMTok: 0.02, effectiveFrom: '2025-08-28' },
  { model: 'grok-4-fast', provider: 'xai', inputPerMTok: 0.2, outputPerMTok: 0.5, cacheReadPerMTok: 0.05, effectiveFrom: '2025-09-19' },
  { model: 'grok-4.1-fast', provider: 'xai', inputPerMTok: 0.2, outputPerMTok: 0.5, cacheReadPerMTok: 0.05, effectiveFrom: '2025-11-19' },
  // (2026) Without rows of their own these were priced by prefix as grok-4 (3 / 15).
  { model: 'grok-4.3', provider: 'xai', inputPerMTok: 1.25, outputPerMTok: 2.5, cacheReadPerMTok: 0.2, effectiveFrom: '2026-05-14' },
  { model: 'grok-4.20', provider: 'xai', inputPerMTok: 1.25, outputPerMTok: 2.5, cacheReadPerMTok: 0.2, effectiveFrom: '2026-06-15' },
  { model: 'grok-4.5', provider: 'xai', aliases: ['grok-latest'], inputPerMTok: 2, outputPerMTok: 6, cacheReadPerMTok: 0.5, effectiveFrom: '2026-07-08' },
];

export const BUNDLED_PRICES: readonly ModelPrice[] = [...OPENAI, ...ANTHROPIC, ...GOOGLE, ...MISTRAL, ...META, ...DEEPSEEK, ...XAI];
