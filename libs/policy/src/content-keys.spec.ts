import { ContentKeys, indexedPrefix } from './content-keys';

const sides = (attributes: Record<string, string>, eventName?: string) =>
  Object.fromEntries(new ContentKeys().contentKeysOf(attributes, eventName));

describe('ContentKeys', () => {
  it('finds the later messages of a family whose first message comes after them', () => {
    const attributes = {
      'gen_ai.completion.1.content': 'b',
      'gen_ai.prompt.2.content': 'c',
      'gen_ai.prompt.0.role': 'user',
      'gen_ai.completion.0.role': 'assistant',
    };
    expect(sides(attributes)).toEqual({
      'gen_ai.completion.1.content': 'output',
      'gen_ai.prompt.2.content': 'input',
      'gen_ai.prompt.0.role': 'input',
      'gen_ai.completion.0.role': 'output',
    });
  });

  it('does not take indexed keys for messages without a first message, as the normaliser does not', () => {
    expect(sides({ 'gen_ai.prompt.3.content': 'x', 'llm.tools.0.tool.json_schema': '{}' })).toEqual({});
  });

  it('remembers a family once seen, for spans that only carry later messages', () => {
    const keys = new ContentKeys();
    keys.contentKeysOf({ 'llm.output_messages.0.message.role': 'assistant' });
    expect(keys.contentKeysOf({ 'llm.output_messages.4.message.content': 'x' })).toEqual([
      ['llm.output_messages.4.message.content', 'output'],
    ]);
  });

  it('knows the contents the normaliser leaves in the attributes', () => {
    expect(
      sides({
        'gen_ai.prompt.variable.user_name': 'Alice',
        'gen_ai.guardrail.content.input.value': 'a',
        'gen_ai.guardrail.content.output.value': 'b',
        'embedding.embeddings.0.embedding.text': 'c',
        'reranker.query': 'd',
        'reranker.output_documents.0.document.content': 'e',
        'ai.embeddings': '[[0.1]]',
      }),
    ).toEqual({
      'gen_ai.prompt.variable.user_name': 'input',
      'gen_ai.guardrail.content.input.value': 'input',
      'gen_ai.guardrail.content.output.value': 'output',
      'embedding.embeddings.0.embedding.text': 'input',
      'reranker.query': 'input',
      'reranker.output_documents.0.document.content': 'output',
      'ai.embeddings': 'output',
    });
  });

  it('takes an event field for content only on a GenAI message event', () => {
    const fields = { content: 'hi', tool_calls: '[]', message: '{}', id: 'call_1', finish_reason: 'stop' };
    expect(sides(fields, 'gen_ai.tool.message')).toEqual({ content: 'input', tool_calls: 'input', message: 'input' });
    expect(sides(fields, 'gen_ai.choice')).toEqual({ content: 'output', tool_calls: 'output', message: 'output' });
    expect(sides(fields, 'log')).toEqual({});
    expect(sides(fields)).toEqual({});
  });

  it.each([
    ['gen_ai.prompt.0.content', 'gen_ai.prompt.'],
    ['llm.input_messages.12.message.contents.0.message_content.text', 'llm.input_messages.'],
    ['a.b.7', 'a.b.'],
    ['gen_ai.prompt.variable.x', undefined],
    ['v1.2x', undefined],
    ['http.response.status_code', undefined],
  ])('reads the prefix before the first index of %s', (key, prefix) => {
    expect(indexedPrefix(key)).toBe(prefix);
  });
});
