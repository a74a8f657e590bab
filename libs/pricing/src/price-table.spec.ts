import { ErrorCode } from '@spanforge/errors';
import { modelKey } from './model-key';
import type { ModelPrice, PriceOverride } from './price.model';
import { PriceTable } from './price-table';
import { BUNDLED_PRICES, PRICE_TABLE_VERSION } from './prices.data';

const table = PriceTable.bundled();
const DAY_MS = 86_400_000;
const NOW = new Date(`${PRICE_TABLE_VERSION.slice(0, 10)}T12:00:00Z`);

/** The bundled rows of a model, oldest first, as the data module states them. */
function rowsOf(model: string, provider?: string): ModelPrice[] {
  return BUNDLED_PRICES.filter((r) => r.model === model && (provider === undefined || r.provider === provider)).sort((a, b) =>
    a.effectiveFrom.localeCompare(b.effectiveFrom),
  );
}

/** The row of a model in force at `at` according to the data (last effectiveFrom at or before it). */
function rowInForce(model: string, at: Date): ModelPrice {
  const day = at.toISOString().slice(0, 10);
  const rows = rowsOf(model);
  return rows.filter((r) => r.effectiveFrom <= day).at(-1) ?? rows[0];
}

describe('PriceTable.lookup: one model of each provider family', () => {
  it.each([
    ['gpt-4o', 'openai', 'gpt-4o'],
    ['o3', 'openai', 'o3'],
    ['gpt-5-mini', 'openai', 'gpt-5-mini'],
    ['claude-sonnet-4-5', 'anthropic', 'claude-sonnet-4-5'],
    ['claude-3-opus', 'anthropic', 'claude-3-opus'],
    ['gemini-2.5-pro', 'google_gemini', 'gemini-2.5-pro'],
    ['gemini-1.5-flash', 'google_vertex', 'gemini-1.5-flash'],
    ['mistral-large', 'mistral', 'mistral-large'],
    ['codestral', 'mistral', 'codestral'],
    ['llama-3.3-70b', 'meta', 'llama-3.3-70b'],
    ['deepseek-chat', 'deepseek', 'deepseek-chat'],
    ['deepseek-reasoner', 'deepseek', 'deepseek-reasoner'],
    ['grok-4', 'xai', 'grok-4'],
    // 2026 models a prefix or snapshot fallback used to price as an older, dearer model.
    ['grok-4.3', 'xai', 'grok-4.3'],
    ['grok-4.20', 'xai', 'grok-4.20'],
    ['grok-latest', 'xai', 'grok-4.5'],
    ['gpt-realtime-2.1', 'openai', 'gpt-realtime-2'],
    ['gpt-5.4-image-2', 'openai', 'gpt-5.4-image-2'],
    ['mistral-small-2603', 'mistral', 'mistral-small-2603'],
    ['gemini-3.6-flash', 'google_gemini', 'gemini-3.6-flash'],
  ])('%s (%s) is priced from the bundled row of %s', (pricingModel, provider, model) => {
    const quote = table.lookup(pricingModel, provider, NOW);
    const row = rowInForce(model, NOW);
    expect(quote).toMatchObject({
      model,
      source: 'price_table',
      version: `bundled:${PRICE_TABLE_VERSION}`,
      match: 'exact',
      inputPerMTok: row.inputPerMTok,
      outputPerMTok: row.outputPerMTok,
      effectiveFrom: row.effectiveFrom,
    });
  });

  it('prices Azure OpenAI and Bedrock/Vertex Claude spans at the list price of the model', () => {
    expect(table.lookup('gpt-4o', 'azure_openai', NOW)).toEqual(table.lookup('gpt-4o', 'openai', NOW));
    expect(table.lookup('claude-sonnet-4-5', 'aws_bedrock', NOW)).toEqual(table.lookup('claude-sonnet-4-5', 'anthropic', NOW));
    expect(table.lookup('claude-sonnet-4-5', 'google_vertex', NOW)).toEqual(table.lookup('claude-sonnet-4-5', '', NOW));
  });
});

describe('PriceTable.lookup: matching', () => {
  it.each([
    ['gpt-4o-mini-2024-07-18', 'gpt-4o-mini'],
    ['claude-3-5-sonnet-20241022', 'claude-3-5-sonnet'],
    ['claude-3-5-sonnet-latest', 'claude-3-5-sonnet'],
    ['claude-sonnet-4-5-20250929', 'claude-sonnet-4-5'],
    ['anthropic.claude-3-5-sonnet-20241022-v2:0', 'claude-3-5-sonnet'],
    ['claude-opus-4-1@20250805', 'claude-opus-4-1'],
    ['gemini-1.5-pro-002', 'gemini-1.5-pro'],
    ['mistral-large-latest', 'mistral-large'],
    ['gpt-5-2025-08-07', 'gpt-5'],
  ])('snapshot %s -> %s', (pricingModel, model) => {
    expect(table.lookup(pricingModel, '', NOW)).toMatchObject({ model, match: 'snapshot' });
  });

  it('matches a pinned snapshot that has its own price exactly, before stripping its date', () => {
    const at = new Date('2025-01-15T00:00:00Z');
    const pinned = table.lookup('gpt-4o-2024-05-13', 'openai', at);
    expect(pinned).toMatchObject({ model: 'gpt-4o-2024-05-13', match: 'exact', inputPerMTok: rowsOf('gpt-4o-2024-05-13')[0].inputPerMTok });
    expect(pinned?.inputPerMTok).not.toBe(table.lookup('gpt-4o', 'openai', at)?.inputPerMTok);
  });

  it.each([
    ['gpt-4-1106-preview', 'gpt-4-turbo'],
    ['gpt-35-turbo', 'gpt-3.5-turbo'],
    ['claude-4-sonnet', 'claude-sonnet-4'],
    ['deepseek-r1', 'deepseek-reasoner'],
    ['llama3-70b', 'llama-3-70b'],
    ['gemini-2.5-flash-preview-09-2025', 'gemini-2.5-flash'],
  ])('alias %s -> %s', (alias, model) => {
    expect(table.lookup(alias, '', NOW)).toMatchObject({ model, match: 'exact' });
  });

  it('takes the longest known prefix: gpt-4o-mini variants never fall back to gpt-4o', () => {
    const mini = table.lookup('gpt-4o-mini-search-preview', 'openai', NOW);
    expect(mini).toMatchObject({ model: 'gpt-4o-mini', match: 'prefix' });
    expect(table.lookup('gpt-4o-search-preview', 'openai', NOW)).toMatchObject({ model: 'gpt-4o', match: 'prefix' });
    expect(mini?.inputPerMTok).toBe(rowInForce('gpt-4o-mini', NOW).inputPerMTok);
    expect(table.lookup('claude-opus-4-5-thinking', '', NOW)).toMatchObject({ model: 'claude-opus-4-5' });
    expect(table.lookup('gemini-2.5-flash-lite-preview-06-17', '', NOW)).toMatchObject({ model: 'gemini-2.5-flash-lite' });
  });

  it('only cuts prefixes at a boundary', () => {
    expect(table.lookup('o1x', 'openai', NOW)).toBeUndefined();
    expect(table.lookup('gpt-4oo', 'openai', NOW)).toBeUndefined();
  });

  it('treats dotted and dashed version numbers as one model', () => {
    for (const [dotted, dashed] of [
      ['claude-3.5-sonnet', 'claude-3-5-sonnet'],
      ['claude-opus-4.1', 'claude-opus-4-1'],
      ['gpt-4.1-mini', 'gpt-4-1-mini'],
      ['gemini-2.0-flash', 'gemini-2-0-flash'],
      ['llama-3.1-8b-instruct', 'llama-3-1-8b-instruct'],
    ]) {
      const quote = table.lookup(dotted, '', NOW);
      expect(quote).toBeDefined();
      expect(table.lookup(dashed, '', NOW)).toEqual(quote);
    }
  });

  it('is case-insensitive and ignores routing and Bedrock prefixes', () => {
    const quote = table.lookup('claude-3-5-haiku', 'anthropic', NOW);
    expect(table.lookup('Claude-3-5-Haiku', 'anthropic', NOW)).toEqual(quote);
    expect(table.lookup('openrouter/anthropic/claude-3-5-haiku', 'anthropic', NOW)).toEqual(quote);
    expect(table.lookup('us.anthropic.claude-3-5-haiku-20241022-v1:0', 'aws_bedrock', NOW)?.model).toBe('claude-3-5-haiku');
  });

  it('returns undefined for unknown or empty models', () => {
    expect(table.lookup('my-own-llm', 'openai', NOW)).toBeUndefined();
    expect(table.lookup('', '', NOW)).toBeUndefined();
    expect(table.lookup('   ', '', NOW)).toBeUndefined();
  });

  it('memoises: the same model string gets the same quote object, and the cache stays bounded', () => {
    expect(table.lookup('gpt-4o-2024-11-20', 'openai', NOW)).toBe(table.lookup('gpt-4o-2024-11-20', 'openai', NOW));
    const fresh = PriceTable.bundled().withOverrides([]);
    for (let i = 0; i < 12_000; i++) fresh.lookup(`junk-model-${i}`, '', NOW);
    expect(fresh.lookup('junk-model-0', '', NOW)).toBeUndefined();
    expect(fresh.lookup('gpt-4o', 'openai', NOW)?.model).toBe('gpt-4o');
    // White-box: the bound is what keeps a flood of unique names from growing memory.
    expect((fresh as unknown as { resolutions: Map<string, unknown> }).resolutions.size).toBeLessThanOrEqual(10_000);
  });
});

describe('PriceTable.lookup: effective dates', () => {
  const changed = [...new Set(BUNDLED_PRICES.map((r) => r.model))].filter((m) => rowsOf(m).length > 1);

  it.each(changed)('%s: a span just before a price change gets the old price, one at the change the new', (model) => {
    const rows = rowsOf(model);
    for (let i = 1; i < rows.length; i++) {
      const changeMs = Date.parse(`${rows[i].effectiveFrom}T00:00:00Z`);
      const before = table.lookup(model, rows[i].provider, changeMs - 1);
      const after = table.lookup(model, rows[i].provider, changeMs);
      expect(before).toMatchObject({
        effectiveFrom: rows[i - 1].effectiveFrom,
        inputPerMTok: rows[i - 1].inputPerMTok,
        outputPerMTok: rows[i - 1].outputPerMTok,
      });
      expect(after).toMatchObject({
        effectiveFrom: rows[i].effectiveFrom,
        inputPerMTok: rows[i].inputPerMTok,
        outputPerMTok: rows[i].outputPerMTok,
      });
    }
  });

  it('prices o3 before and after the 2025-06-10 cut, whatever the time type', () => {
    const before = new Date('2025-06-09T23:59:59Z');
    const after = new Date('2025-06-10T00:00:00Z');
    expect(table.lookup('o3-2025-04-16', 'openai', before)).toMatchObject({ inputPerMTok: 10, outputPerMTok: 40 });
    expect(table.lookup('o3-2025-04-16', 'openai', after)).toMatchObject({ inputPerMTok: 2, outputPerMTok: 8 });
    expect(table.lookup('o3', 'openai', after.getTime())).toEqual(table.lookup('o3', 'openai', after));
    expect(table.lookup('o3', 'openai', BigInt(after.getTime()) * 1_000_000n)).toEqual(table.lookup('o3', 'openai', after));
  });

  it('gives a span older than a model first row that first row (approximate launch days, clock skew)', () => {
    const first = rowsOf('gpt-4o')[0];
    const early = Date.parse(`${first.effectiveFrom}T00:00:00Z`) - 30 * DAY_MS;
    expect(table.lookup('gpt-4o', 'openai', early)).toMatchObject({ effectiveFrom: first.effectiveFrom, inputPerMTok: first.inputPerMTok });
  });

  it('uses the newest price when the span time is not a number', () => {
    expect(table.lookup('o3', 'openai', Number.NaN)).toEqual(table.lookup('o3', 'openai', NOW));
  });
});

describe('PriceTable.withOverrides', () => {
  const override: PriceOverride = { id: 'ovr-1', model: 'gpt-4o', inputPerMTok: 1, outputPerMTok: 4, effectiveFrom: '2025-01-01' };

  it('beats the bundled price in that table only, from its effectiveFrom on', () => {
    const project = table.withOverrides([override]);
    const quote = project.lookup('gpt-4o', 'openai', new Date('2025-03-01T00:00:00Z'));
    expect(quote).toMatchObject({ source: 'override', version: 'override:ovr-1', inputPerMTok: 1, outputPerMTok: 4 });
    // Cache prices the override leaves out cost the input price.
    expect(quote).toMatchObject({ cacheReadPerMTok: override.inputPerMTok, cacheWritePerMTok: override.inputPerMTok });
    expect(project.lookup('gpt-4o', 'openai', new Date('2024-12-31T23:59:59Z'))?.source).toBe('price_table');
    expect(table.lookup('gpt-4o', 'openai', new Date('2025-03-01T00:00:00Z'))?.source).toBe('price_table');
    expect(PriceTable.bundled().lookup('gpt-4o', 'openai', NOW)?.source).toBe('price_table');
  });

  it('applies to snapshots of the model, but never to a longer model name the bundled table knows', () => {
    const project = table.withOverrides([override]);
    expect(project.lookup('gpt-4o-2024-12-01', 'openai', NOW)).toMatchObject({ source: 'override', match: 'snapshot' });
    expect(project.lookup('gpt-4o-mini', 'openai', NOW)).toMatchObject({ source: 'price_table', model: 'gpt-4o-mini' });
  });

  it('prices models the bundled table does not know (fine-tunes, self-hosted)', () => {
    const fineTune = 'ft:gpt-4o-mini-2024-07-18:acme::abc123';
    // Fine-tunes cost more than their base model: unpriced is more honest than the base price.
    expect(table.lookup(fineTune, 'openai', NOW)).toBeUndefined();
    const project = table.withOverrides([{ id: 'ft', model: fineTune, aliases: ['acme-support'], inputPerMTok: 0.3, outputPerMTok: 1.2 }]);
    expect(project.lookup(fineTune, 'openai', NOW)).toMatchObject({
      source: 'override',
      match: 'exact',
      inputPerMTok: 0.3,
      effectiveFrom: '1970-01-01',
    });
    expect(project.lookup('acme-support', '', NOW)).toMatchObject({ source: 'override', model: fineTune });
  });

  it('prices a span the override does not cover yet as the bundled table would', () => {
    const project = table.withOverrides([
      { id: 'custom', model: 'gpt-4o-custom', inputPerMTok: 1, outputPerMTok: 2, effectiveFrom: '2025-06-01' },
    ]);
    const before = new Date('2025-05-31T00:00:00Z');
    expect(project.lookup('gpt-4o-custom', 'openai', before)).toEqual(table.lookup('gpt-4o-custom', 'openai', before));
    expect(project.lookup('gpt-4o-custom', 'openai', before)).toMatchObject({ model: 'gpt-4o', source: 'price_table', match: 'prefix' });
    expect(project.lookup('gpt-4o-custom', 'openai', new Date('2025-06-01T00:00:00Z'))).toMatchObject({
      source: 'override',
      match: 'exact',
    });
  });

  it('limits a provider-specific override to that provider, and prefers it to an any-provider one', () => {
    const project = table.withOverrides([
      { id: 'azure', model: 'gpt-4o', provider: 'azure_openai', inputPerMTok: 2, outputPerMTok: 8 },
      { id: 'any', model: 'gpt-4o', inputPerMTok: 3, outputPerMTok: 9 },
    ]);
    expect(project.lookup('gpt-4o', 'azure_openai', NOW)?.version).toBe('override:azure');
    expect(project.lookup('gpt-4o', 'openai', NOW)?.version).toBe('override:any');
    const onlyAzure = table.withOverrides([{ id: 'azure', model: 'gpt-4o', provider: 'azure_openai', inputPerMTok: 2, outputPerMTok: 8 }]);
    expect(onlyAzure.lookup('gpt-4o', 'openai', NOW)?.source).toBe('price_table');
  });

  it('keeps a project price history: the override in force at the span start wins', () => {
    const project = table.withOverrides([
      { id: 'v1', model: 'claude-sonnet-4-5', inputPerMTok: 2.5, outputPerMTok: 12, effectiveFrom: '2025-10-01' },
      { id: 'v2', model: 'claude-sonnet-4-5', inputPerMTok: 2, outputPerMTok: 10, effectiveFrom: new Date('2026-01-01T00:00:00Z') },
    ]);
    expect(project.lookup('claude-sonnet-4-5', 'anthropic', new Date('2025-12-31T23:00:00Z'))?.version).toBe('override:v1');
    expect(project.lookup('claude-sonnet-4-5', 'anthropic', new Date('2026-01-01T00:00:00Z'))?.version).toBe('override:v2');
  });

  it('replaces the overrides of the table it is called on', () => {
    const first = table.withOverrides([override]);
    const second = first.withOverrides([{ ...override, id: 'ovr-2', model: 'o3' }]);
    expect(second.lookup('gpt-4o', 'openai', NOW)?.source).toBe('price_table');
    expect(second.lookup('o3', 'openai', NOW)?.version).toBe('override:ovr-2');
  });

  it('rejects overrides whose names collide, as bad user input', () => {
    const colliding = [
      { id: 'a', model: 'house-model', aliases: ['shared-name'], inputPerMTok: 1, outputPerMTok: 1 },
      { id: 'b', model: 'shared-name', inputPerMTok: 2, outputPerMTok: 2 },
    ];
    expect(() => table.withOverrides(colliding)).toThrow(expect.objectContaining({ code: ErrorCode.BAD_USER_INPUT }));
    expect(() => table.withOverrides(colliding)).toThrow(/shared-name/);
  });

  it('keeps model keys of overrides normalised like bundled ones', () => {
    const project = table.withOverrides([{ ...override, model: 'GPT-4o' }]);
    expect(project.lookup(modelKey('gpt-4o'), 'openai', NOW)?.source).toBe('override');
  });
});
