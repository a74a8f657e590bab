import { moveContent } from './content';

describe('moveContent', () => {
  it('returns the same attributes object when there is no content', () => {
    const attributes = { 'gen_ai.operation.name': 'chat' };
    expect(moveContent(attributes)).toEqual({ input: '', output: '', attributes });
    expect(moveContent(attributes).attributes).toBe(attributes);
  });

  it('folds system instructions into structured or empty histories, and alone', () => {
    const system = '[{"type":"text","content":"Be kind."}]';
    const expectedSystem = { role: 'system', parts: [{ type: 'text', content: 'Be kind.' }] };
    expect(JSON.parse(moveContent({ 'gen_ai.system_instructions': system, 'gen_ai.input.messages': '[]' }).input)).toEqual([
      expectedSystem,
    ]);
    expect(JSON.parse(moveContent({ 'gen_ai.system_instructions': system }).input)).toEqual([expectedSystem]);
    const structured = moveContent({
      'gen_ai.system_instructions': [{ type: 'text', content: 'Be kind.' }],
      'gen_ai.input.messages': [{ role: 'user', parts: [] }],
    });
    expect(JSON.parse(structured.input)).toEqual([expectedSystem, { role: 'user', parts: [] }]);
    expect(
      JSON.parse(
        moveContent({ 'gen_ai.system_instructions': 'Be kind.', 'gen_ai.input.messages': '[{"role":"user","parts":[]}]' }).input,
      )[0],
    ).toEqual(expectedSystem);
  });

  it('stays valid JSON when the decoder cut the message list', () => {
    const cut = '[{"role":"user","parts":[{"type":"text","content":"a very long';
    const { input } = moveContent({ 'gen_ai.system_instructions': 'Be kind.', 'gen_ai.input.messages': cut });
    expect(JSON.parse(input)).toEqual({ system_instructions: [{ type: 'text', content: 'Be kind.' }], messages: cut });
  });

  it('keeps a client-sent __proto__ segment an ordinary key and never touches Object.prototype', () => {
    const { input } = moveContent({
      'gen_ai.prompt.0.role': 'user',
      'gen_ai.prompt.0.__proto__.polluted': 'yes',
      'gen_ai.prompt.0.content': 'hi',
    });
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
    expect(input).toBe('[{"role":"user","__proto__":{"polluted":"yes"},"content":"hi"}]');
  });

  it('drops an index no dense list could have instead of allocating it', () => {
    const { input, attributes } = moveContent({ 'gen_ai.prompt.0.role': 'user', 'gen_ai.prompt.99999.content': 'x' });
    expect(JSON.parse(input)).toEqual([{ role: 'user' }]);
    expect(attributes).toEqual({});
  });

  it('does not write into an attribute value that is itself an object', () => {
    const nested = { role: 'user' };
    moveContent({ 'gen_ai.prompt.0': nested, 'gen_ai.prompt.0.content': 'hi', 'gen_ai.prompt.0.role': 'user' });
    expect(nested).toEqual({ role: 'user' });
  });

  it('leaves look-alike keys that are not content in place', () => {
    const { attributes } = moveContent({
      'gen_ai.prompt.name': 'support-v3',
      'gen_ai.prompt.0.role': 'user',
      'llm.input_messages_count': 2,
    });
    expect(attributes).toEqual({ 'gen_ai.prompt.name': 'support-v3', 'llm.input_messages_count': 2 });
  });

  it('renders structured values as JSON and keeps plain text as sent', () => {
    expect(
      moveContent({ 'gen_ai.retrieval.query.text': 'refund policy', 'gen_ai.retrieval.documents': [{ id: 'doc-1', score: 0.92 }] }),
    ).toMatchObject({ input: 'refund policy', output: '[{"id":"doc-1","score":0.92}]' });
  });
});
