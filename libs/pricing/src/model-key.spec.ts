import { boundaryPrefixes, modelKey, snapshotBase } from './model-key';

describe('modelKey', () => {
  it.each([
    ['GPT-4o', 'gpt-4o'],
    ['  gpt-4o-mini ', 'gpt-4o-mini'],
    ['openai/gpt-4o', 'gpt-4o'],
    ['openrouter/anthropic/claude-3.5-sonnet', 'claude-3-5-sonnet'],
    ['models/gemini-2.0-flash', 'gemini-2-0-flash'],
    ['anthropic.claude-3-5-sonnet-20241022-v2:0', 'claude-3-5-sonnet-20241022-v2:0'],
    ['us.anthropic.claude-sonnet-4-20250514-v1:0', 'claude-sonnet-4-20250514-v1:0'],
    ['meta.llama3-1-70b-instruct-v1:0', 'llama3-1-70b-instruct-v1:0'],
    ['claude-3.5-sonnet', 'claude-3-5-sonnet'],
  ])('%s -> %s', (model, key) => {
    expect(modelKey(model)).toBe(key);
  });

  it('spells dotted and dashed versions the same', () => {
    expect(modelKey('gpt-4.1-mini')).toBe(modelKey('gpt-4-1-mini'));
    expect(modelKey('gemini-2.5-pro')).toBe(modelKey('gemini-2-5-pro'));
  });
});

describe('snapshotBase', () => {
  it.each([
    ['gpt-4o-2024-08-06', 'gpt-4o'],
    ['claude-3-5-sonnet-20241022', 'claude-3-5-sonnet'],
    ['claude-3-5-sonnet-latest', 'claude-3-5-sonnet'],
    ['claude-3-5-sonnet-20241022-v2:0', 'claude-3-5-sonnet'],
    ['claude-3-5-sonnet-v2@20241022', 'claude-3-5-sonnet'],
    ['claude-sonnet-4@20250514', 'claude-sonnet-4'],
    ['gpt-4-0613', 'gpt-4'],
    ['mistral-large-2411', 'mistral-large'],
    ['gemini-2-5-flash-preview-05-20', 'gemini-2-5-flash-preview'],
    ['gemini-2-5-flash-preview-09-2025', 'gemini-2-5-flash-preview'],
    ['gemini-1-5-pro-002', 'gemini-1-5-pro'],
  ])('%s -> %s', (key, base) => {
    expect(snapshotBase(key)).toBe(base);
  });

  it.each(['claude-sonnet-4-5', 'gpt-4-1', 'deepseek-v3', 'llama-3-1-70b', 'o3-mini', 'gpt-5-2'])(
    'leaves the version number of %s alone',
    (key) => {
      expect(snapshotBase(key)).toBe(key);
    },
  );
});

describe('boundaryPrefixes', () => {
  it('yields the prefixes ending on a boundary, longest first', () => {
    expect([...boundaryPrefixes('gpt-4o-mini-x')]).toEqual(['gpt-4o-mini', 'gpt-4o', 'gpt']);
    expect([...boundaryPrefixes('llama3-1:70b')]).toEqual(['llama3-1', 'llama3']);
  });
});
