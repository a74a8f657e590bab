import { readModelNames, toPricingModel } from './model';
import { canonicalProvider, inferProviderFromModel } from './provider';

describe('toPricingModel', () => {
  it.each([
    ['gpt-4o', 'gpt-4o'],
    ['GPT-4o-2024-08-06', 'gpt-4o-2024-08-06'],
    ['openai/gpt-4o', 'gpt-4o'],
    ['openrouter/anthropic/claude-3.5-sonnet', 'claude-3.5-sonnet'],
    ['models/gemini-1.5-pro', 'gemini-1.5-pro'],
    ['projects/p1/locations/us-central1/publishers/google/models/gemini-2.0-flash-001', 'gemini-2.0-flash-001'],
    ['anthropic.claude-3-5-sonnet-20240620-v1:0', 'claude-3-5-sonnet-20240620'],
    ['us.anthropic.claude-3-5-sonnet-20241022-v2:0', 'claude-3-5-sonnet-20241022'],
    ['arn:aws:bedrock:us-east-1::foundation-model/meta.llama3-1-70b-instruct-v1:0', 'llama3-1-70b-instruct'],
    ['amazon.nova-pro-v1:0', 'nova-pro'],
    ['anthropic.claude-v2:1', 'claude-v2'],
    ['anthropic.claude-3-haiku-20240307-v1:0:200k', 'claude-3-haiku-20240307'],
    ['my-gpt4o-deployment', 'my-gpt4o-deployment'], // Azure deployment names stay
    ['claude-3.5-sonnet', 'claude-3.5-sonnet'], // a dot in a model name is not a Bedrock vendor
    ['deepseek-v3', 'deepseek-v3'],
    ['', ''],
  ])('%s → %s', (model, pricingModel) => {
    expect(toPricingModel(model).pricingModel).toBe(pricingModel);
  });
});

describe('readModelNames', () => {
  it('prefers the response model, keeps the requested one, and falls back to the only model named', () => {
    expect(readModelNames({ 'gen_ai.request.model': 'gpt-4o', 'gen_ai.response.model': 'gpt-4o-2024-08-06' })).toMatchObject({
      model: 'gpt-4o-2024-08-06',
      modelRequested: 'gpt-4o',
    });
    expect(readModelNames({ 'ai.model.id': 'gpt-4o-mini', 'ai.response.model': 'gpt-4o-mini-2024-07-18' })).toMatchObject({
      model: 'gpt-4o-mini-2024-07-18',
      modelRequested: 'gpt-4o-mini',
    });
    expect(readModelNames({ 'llm.model_name': 'claude-3-opus-20240229' })).toMatchObject({
      model: 'claude-3-opus-20240229',
      modelRequested: 'claude-3-opus-20240229',
    });
    expect(readModelNames({})).toMatchObject({ model: '', modelRequested: '', pricingModel: '' });
  });
});

describe('canonicalProvider', () => {
  it.each([
    ['openai', 'openai'],
    ['Anthropic', 'anthropic'],
    ['azure.ai.openai', 'azure_openai'],
    ['az.ai.inference', 'azure_ai_inference'],
    ['aws.bedrock', 'aws_bedrock'],
    ['amazon-bedrock', 'aws_bedrock'],
    ['gcp.vertex_ai', 'google_vertex'],
    ['vertex_ai', 'google_vertex'],
    ['google.vertex.chat', 'google_vertex'],
    ['gcp.gemini', 'google_gemini'],
    ['gemini', 'google_gemini'],
    ['google.generative-ai', 'google_gemini'],
    ['gcp.gen_ai', 'google'],
    ['mistral_ai', 'mistral'],
    ['xai', 'xai'],
    ['x_ai', 'xai'],
    ['ibm.watsonx.ai', 'ibm_watsonx'],
    ['anthropic.messages', 'anthropic'],
    ['openai.chat', 'openai'],
    ['azure-openai.chat', 'azure_openai'],
    ['groq.chat', 'groq'],
    ['acme-llm', 'acme-llm'],
  ])('%s → %s', (raw, canonical) => {
    expect(canonicalProvider(raw)).toBe(canonical);
  });

  it.each(['langchain', 'CrewAI', 'llamaindex', ''])('does not take the framework name %p for a provider', (raw) => {
    expect(canonicalProvider(raw)).toBeUndefined();
  });
});

describe('inferProviderFromModel', () => {
  it.each([
    ['gpt-4o', 'openai'],
    ['o3-mini', 'openai'],
    ['claude-3-5-haiku', 'anthropic'],
    ['gemini-2.5-pro', 'google'],
    ['mixtral-8x7b', 'mistral'],
    ['llama-3.1-70b', 'meta'],
    ['deepseek-r1', 'deepseek'],
    ['my-finetune', ''],
  ])('%s → %s', (model, provider) => {
    expect(inferProviderFromModel(model, model, false)).toBe(provider);
  });

  it('reads a routing prefix and a Bedrock model id before the family', () => {
    expect(inferProviderFromModel('anthropic/claude-3.5-sonnet', 'claude-3.5-sonnet', false)).toBe('anthropic');
    expect(inferProviderFromModel('openrouter/anthropic/claude-3.5-sonnet', 'claude-3.5-sonnet', false)).toBe('openrouter');
    expect(inferProviderFromModel('anthropic.claude-3-5-sonnet-20240620-v1:0', 'claude-3-5-sonnet-20240620', true)).toBe('aws_bedrock');
  });
});
