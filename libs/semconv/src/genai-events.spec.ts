import { genAiEventContent, joinMessageArrays } from './genai-events';

const system = { 'gen_ai.system': 'openai' };

describe('GenAI events as span contents', () => {
  it('turns the per-message events of a tool-calling conversation into input and output messages', () => {
    const toolCall = { id: 'call_1', type: 'function', function: { name: 'get_weather', arguments: '{"city":"Paris"}' } };
    const events = [
      genAiEventContent('gen_ai.system.message', { content: 'You are terse.' }, system),
      genAiEventContent('gen_ai.user.message', { content: 'Weather in Paris?' }, system),
      genAiEventContent('gen_ai.assistant.message', { tool_calls: [toolCall] }, system),
      genAiEventContent('gen_ai.tool.message', { content: '21°C, sunny', id: 'call_1' }, system),
      genAiEventContent(
        'gen_ai.choice',
        { index: 0, finish_reason: 'stop', message: { role: 'assistant', content: 'Sunny, 21°C.' } },
        system,
      ),
    ];

    expect(JSON.parse(joinMessageArrays(events.map((e) => e.input)))).toStrictEqual([
      { role: 'system', parts: [{ type: 'text', content: 'You are terse.' }] },
      { role: 'user', parts: [{ type: 'text', content: 'Weather in Paris?' }] },
      { role: 'assistant', parts: [{ type: 'tool_call', id: 'call_1', name: 'get_weather', arguments: '{"city":"Paris"}' }] },
      { role: 'tool', parts: [{ type: 'tool_call_response', response: '21°C, sunny', id: 'call_1' }] },
    ]);
    expect(JSON.parse(joinMessageArrays(events.map((e) => e.output)))).toStrictEqual([
      { role: 'assistant', parts: [{ type: 'text', content: 'Sunny, 21°C.' }], finish_reason: 'stop' },
    ]);
    // The facts stay on the events, the contents do not.
    expect(events[4]!.attributes).toStrictEqual({ 'gen_ai.system': 'openai', index: 0, finish_reason: 'stop' });
    expect(events[3]!.attributes).toStrictEqual({ 'gen_ai.system': 'openai', id: 'call_1' });
  });

  it('gives a choice that asks for tools its tool calls as output', () => {
    const choice = genAiEventContent(
      'gen_ai.choice',
      {
        index: 0,
        finish_reason: 'tool_calls',
        message: { role: 'assistant', tool_calls: [{ id: 'c', type: 'function', function: { name: 'search', arguments: '{}' } }] },
      },
      system,
    );

    expect(JSON.parse(choice.output)).toStrictEqual([
      { role: 'assistant', parts: [{ type: 'tool_call', id: 'c', name: 'search', arguments: '{}' }], finish_reason: 'tool_calls' },
    ]);
  });

  it('adds no messages when contents were not captured, and keeps the facts', () => {
    const user = genAiEventContent('gen_ai.user.message', {}, system);
    const choice = genAiEventContent('gen_ai.choice', { index: 0, finish_reason: 'stop', message: {} }, system);

    expect([user.input, user.output, choice.input, choice.output]).toStrictEqual(['', '', '', '']);
    expect(choice.attributes).toStrictEqual({ 'gen_ai.system': 'openai', index: 0, finish_reason: 'stop' });
    expect(joinMessageArrays([user.input, choice.input])).toBe('');
  });

  it('takes the operation details event of semconv 1.37+ as it is, system instructions first', () => {
    const input = [{ role: 'user', parts: [{ type: 'text', content: 'Hi' }] }];
    const output = [{ role: 'assistant', parts: [{ type: 'text', content: 'Hello!' }], finish_reason: 'stop' }];
    const instructions = [{ type: 'text', content: 'Be kind.' }];
    const details = genAiEventContent('gen_ai.client.inference.operation.details', null, {
      'gen_ai.operation.name': 'chat',
      'gen_ai.input.messages': input,
      'gen_ai.output.messages': JSON.stringify(output),
      'gen_ai.system_instructions': instructions,
    });

    expect(JSON.parse(details.input)).toStrictEqual([{ role: 'system', parts: instructions }, ...input]);
    expect(JSON.parse(details.output)).toStrictEqual(output);
    expect(details.attributes).toStrictEqual({ 'gen_ai.operation.name': 'chat' });
  });

  it('keeps other gen_ai events as events without contents', () => {
    const evaluation = genAiEventContent('gen_ai.evaluation.result', null, {
      'gen_ai.evaluation.name': 'relevance',
      'gen_ai.evaluation.score.value': 0.8,
    });

    expect(evaluation).toStrictEqual({
      input: '',
      output: '',
      attributes: { 'gen_ai.evaluation.name': 'relevance', 'gen_ai.evaluation.score.value': 0.8 },
    });
  });

  it('joins message arrays in order, skipping empty ones', () => {
    expect(joinMessageArrays(['[{"a":1}]', '', '[]', '[{"b":2},{"c":3}]'])).toBe('[{"a":1},{"b":2},{"c":3}]');
    expect(joinMessageArrays(['[{"a":1}]'])).toBe('[{"a":1}]');
    expect(joinMessageArrays([])).toBe('');
  });
});
