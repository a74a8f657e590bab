import { llmScopeConvention } from './llm-scope';

describe('llmScopeConvention', () => {
  it.each([
    ['ai', 'vercel_ai'],
    ['openinference.instrumentation.langchain', 'openinference'],
    ['@arizeai/openinference-instrumentation-openai', 'openinference'],
    ['opentelemetry.instrumentation.openai.v1', 'gen_ai'],
    ['opentelemetry.instrumentation.openai_v2', 'gen_ai'],
    ['opentelemetry.instrumentation.anthropic', 'gen_ai'],
    ['@opentelemetry/instrumentation-google-genai', 'gen_ai'],
    ['traceloop.tracer', 'openllmetry'],
    ['langfuse-sdk', 'langfuse'],
    ['pydantic-ai', 'gen_ai'],
    ['logfire.openai', 'gen_ai'],
    ['openlit.otel.tracing', 'gen_ai'],
  ])('%s is an LLM library (%s)', (scope, convention) => {
    expect(llmScopeConvention(scope)).toBe(convention);
  });

  it.each([
    '',
    'logfire',
    'opentelemetry.instrumentation.requests',
    'opentelemetry.instrumentation.flask',
    '@opentelemetry/instrumentation-http',
    'my-app',
    'aiohttp',
  ])('%p is not', (scope) => {
    expect(llmScopeConvention(scope)).toBeUndefined();
  });
});
