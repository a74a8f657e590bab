import { compilePolicy, type PolicyLogEvent, type PolicySpan } from './compiled-policy';
import { sha256Of, truncateUtf8 } from './content-capture';
import { DEFAULT_POLICY, type DataPolicyInput } from './data-policy.model';
import { validatePolicy } from './policy.validation';

const compile = (input: DataPolicyInput) => compilePolicy(validatePolicy(input));
const EMAIL = 'someone@example.com';
const EMAIL_MARKER = '[REDACTED:EMAIL]';

type Side = 'input' | 'output';

/** Content attributes of each convention the normaliser reads, with the side they carry. */
const CONTENT_ATTRIBUTES: Array<[string, Side]> = [
  // OTel GenAI
  ['gen_ai.input.messages', 'input'],
  ['gen_ai.system_instructions', 'input'],
  ['gen_ai.output.messages', 'output'],
  ['gen_ai.tool.call.arguments', 'input'],
  ['gen_ai.tool.call.result', 'output'],
  ['gen_ai.retrieval.query.text', 'input'],
  ['gen_ai.retrieval.documents', 'output'],
  ['gen_ai.prompt.variable.customer', 'input'],
  ['gen_ai.prompt', 'input'],
  ['gen_ai.completion', 'output'],
  // OpenLLMetry
  ['gen_ai.prompt.0.role', 'input'],
  ['gen_ai.prompt.0.content', 'input'],
  ['gen_ai.prompt.1.content', 'input'],
  ['gen_ai.completion.0.content', 'output'],
  ['gen_ai.completion.0.tool_calls.0.arguments', 'output'],
  ['traceloop.entity.input', 'input'],
  ['traceloop.entity.output', 'output'],
  // OpenInference
  ['input.value', 'input'],
  ['output.value', 'output'],
  ['llm.input_messages.0.message.role', 'input'],
  ['llm.input_messages.0.message.content', 'input'],
  ['llm.input_messages.1.message.contents.0.message_content.text', 'input'],
  ['llm.output_messages.0.message.content', 'output'],
  ['llm.prompt_template.variables', 'input'],
  ['retrieval.documents.0.document.content', 'output'],
  // Vercel AI SDK
  ['ai.prompt', 'input'],
  ['ai.prompt.messages', 'input'],
  ['ai.response.text', 'output'],
  ['ai.response.toolCalls', 'output'],
  ['ai.response.object', 'output'],
  ['ai.toolCall.args', 'input'],
  ['ai.toolCall.result', 'output'],
  ['ai.values', 'input'],
  // Langfuse
  ['langfuse.observation.input', 'input'],
  ['langfuse.observation.output', 'output'],
  ['langfuse.trace.input', 'input'],
];

const OTHER_ATTRIBUTES: Record<string, string> = {
  'gen_ai.request.model': 'gpt-4o',
  'gen_ai.operation.name': 'chat',
  'gen_ai.usage.input_tokens': '120',
  'gen_ai.prompt.name': 'support-reply',
  'llm.model_name': 'gpt-4o',
  'llm.tools.0.tool.json_schema': '{"name":"lookup"}',
  'ai.model.id': 'gpt-4o',
  'user.note': `reach me at ${EMAIL}`,
};

function contentValue(key: string): string {
  return `content of ${key} from ${EMAIL}`;
}

function spanWith(attributes: Record<string, string>, extra: Partial<PolicySpan> = {}): PolicySpan & { name: string } {
  return {
    name: `span for ${EMAIL}`,
    attributes,
    attribute_json_keys: [],
    resource_attributes: { 'service.name': 'checkout', 'host.ip': '10.1.2.3' },
    'events.name': [],
    'events.attributes': [],
    'links.attributes': [],
    input: `question from ${EMAIL}`,
    output: `answer to ${EMAIL}`,
    status_message: '',
    truncated: 0,
    ...extra,
  };
}

function conventionSpan(): PolicySpan & { name: string } {
  const attributes: Record<string, string> = { ...OTHER_ATTRIBUTES };
  for (const [key] of CONTENT_ATTRIBUTES) attributes[key] = contentValue(key);
  return spanWith(attributes, { attribute_json_keys: ['gen_ai.input.messages', 'gen_ai.usage.input_tokens'] });
}

describe('compilePolicy', () => {
  it('makes the default policy, and one with only a retention, a no-op', () => {
    for (const policy of [DEFAULT_POLICY, validatePolicy({ retentionDays: 30 })]) {
      const compiled = compilePolicy(policy);
      const span = conventionSpan();
      const before = structuredClone(span);
      expect(compiled.isNoop).toBe(true);
      expect(compiled.applyToSpan(span)).toBe(0);
      expect(span).toEqual(before);
    }
  });

  it.each([
    ['DROP', 'HASH'],
    ['HASH', 'DROP'],
    ['HASH', 'FULL'],
  ] as const)('applies inputs %s and outputs %s to the content attributes of every convention', (inputs, outputs) => {
    const span = conventionSpan();
    const count = compile({ capture: { inputs, outputs }, redaction: { detectors: ['EMAIL'] } }).applyToSpan(span);
    const modes = { input: inputs, output: outputs };
    const expected: Record<string, string> = {};
    let fullContent = 0;
    for (const [key, side] of CONTENT_ATTRIBUTES) {
      const mode = modes[side];
      if (mode === 'HASH') expected[key] = sha256Of(contentValue(key));
      if (mode === 'FULL') {
        expected[key] = contentValue(key).replace(EMAIL, EMAIL_MARKER);
        fullContent++;
      }
    }
    for (const [key, value] of Object.entries(OTHER_ATTRIBUTES)) expected[key] = value.replace(EMAIL, EMAIL_MARKER);
    expect(span.attributes).toEqual(expected);
    const columns = { input: `question from ${EMAIL}`, output: `answer to ${EMAIL}` };
    for (const side of ['input', 'output'] as const) {
      const mode = modes[side];
      expect(span[side]).toBe(
        mode === 'DROP' ? '' : mode === 'HASH' ? sha256Of(columns[side]) : columns[side].replace(EMAIL, EMAIL_MARKER),
      );
    }
    // user.note, plus full content attributes and columns.
    const fullColumns = Object.values(modes).filter((mode) => mode === 'FULL').length;
    expect(count).toBe(1 + fullContent + fullColumns);
    // A hashed or dropped value is no JSON; other JSON keys stay listed.
    expect(span.attribute_json_keys).toEqual(['gen_ai.usage.input_tokens']);
  });

  it('applies capture modes to the contents of span events, by event name', () => {
    const events: Array<[string, Record<string, string>]> = [
      ['gen_ai.content.prompt', { 'gen_ai.prompt': `[{"role":"user","content":"I am ${EMAIL}"}]` }],
      ['gen_ai.content.completion', { 'gen_ai.completion': '[{"role":"assistant","content":"hello"}]' }],
      ['gen_ai.user.message', { content: `I am ${EMAIL}`, 'gen_ai.system': 'openai' }],
      ['gen_ai.choice', { message: '{"content":"hello"}', finish_reason: 'stop', index: '0' }],
      [
        'gen_ai.client.inference.operation.details',
        {
          'gen_ai.input.messages': '[{"role":"user"}]',
          'gen_ai.output.messages': '[{"role":"assistant"}]',
          'gen_ai.request.model': 'gpt-4o',
        },
      ],
      ['exception', { 'exception.message': `failed for ${EMAIL}`, content: 'not a message here' }],
    ];
    const span = spanWith(
      {},
      { 'events.name': events.map(([name]) => name), 'events.attributes': events.map(([, attributes]) => ({ ...attributes })) },
    );
    compile({ capture: { inputs: 'DROP', outputs: 'HASH' }, redaction: { detectors: ['EMAIL'] } }).applyToSpan(span);
    expect(span['events.attributes']).toEqual([
      {},
      { 'gen_ai.completion': sha256Of(events[1][1]['gen_ai.completion']) },
      { 'gen_ai.system': 'openai' },
      { message: sha256Of(events[3][1].message), finish_reason: 'stop', index: '0' },
      { 'gen_ai.output.messages': sha256Of(events[4][1]['gen_ai.output.messages']), 'gen_ai.request.model': 'gpt-4o' },
      { 'exception.message': `failed for ${EMAIL_MARKER}`, content: 'not a message here' },
    ]);
  });

  it('cuts content attributes and columns to maxContentBytes, leaving other attributes whole', () => {
    const long = `${'é'.repeat(300)} ${EMAIL}`;
    const span = spanWith({ 'input.value': long, 'output.value': long, 'app.note': long }, { input: long, output: 'short' });
    compile({ capture: { maxContentBytes: 256 }, redaction: { detectors: ['EMAIL'] } }).applyToSpan(span);
    const redacted = long.replace(EMAIL, EMAIL_MARKER);
    expect(span.attributes).toEqual({
      'input.value': truncateUtf8(redacted, 256),
      'output.value': truncateUtf8(redacted, 256),
      'app.note': redacted,
    });
    expect(span.input).toBe(truncateUtf8(redacted, 256));
    expect(span.output).toBe('short');
    expect(span.truncated).toBe(1);
  });

  it('drops attributes by exact key and by prefix everywhere, and forgets them as JSON', () => {
    const span = spanWith(
      { 'user.email': EMAIL, 'http.request.header.cookie': 'a=b', 'http.request.header': 'kept', 'http.request.method': 'GET' },
      {
        attribute_json_keys: ['user.email', 'http.request.method'],
        resource_attributes: { 'user.email': EMAIL, 'service.name': 'svc' },
        'events.name': ['log'],
        'events.attributes': [{ 'http.request.header.authorization': 'Bearer x', level: 'info' }],
        'links.attributes': [{ 'user.email': EMAIL, 'link.kind': 'follows' }],
      },
    );
    const count = compile({ redaction: { dropAttributes: ['user.email', 'http.request.header.*'] } }).applyToSpan(span);
    expect(count).toBe(0);
    expect(span.attributes).toEqual({ 'http.request.header': 'kept', 'http.request.method': 'GET' });
    expect(span.attribute_json_keys).toEqual(['http.request.method']);
    expect(span.resource_attributes).toEqual({ 'service.name': 'svc' });
    expect(span['events.attributes']).toEqual([{ level: 'info' }]);
    expect(span['links.attributes']).toEqual([{ 'link.kind': 'follows' }]);
  });

  it('redacts everywhere but the span name, and counts every replacement', () => {
    const card = '4111 1111 1111 1111';
    const span = spanWith(
      { 'user.note': `mail ${EMAIL} or call +1 415 555 2671`, 'http.client_ip': '192.168.0.7', 'app.ticket': 'see CUST-123456' },
      {
        resource_attributes: { 'host.ip': '10.1.2.3', 'service.name': 'svc' },
        'events.name': ['log'],
        'events.attributes': [{ 'log.message': `paid with ${card}` }],
        'links.attributes': [{ 'link.note': `by ${EMAIL}` }],
        input: `my key is sk-${'aB3'.repeat(16)} and token eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxIn0.c2ln`,
        output: 'nothing to hide',
        status_message: `upstream 10.0.0.9 refused ${EMAIL}`,
      },
    );
    const name = span.name;
    const count = compile({
      redaction: { detectors: ['EMAIL', 'PHONE', 'CREDIT_CARD', 'IP_ADDRESS', 'API_KEY', 'JWT'], patterns: ['CUST-\\d{6}'] },
    }).applyToSpan(span);
    expect(span.attributes).toEqual({
      'user.note': 'mail [REDACTED:EMAIL] or call [REDACTED:PHONE]',
      'http.client_ip': '[REDACTED:IP_ADDRESS]',
      'app.ticket': 'see [REDACTED:PATTERN]',
    });
    expect(span.resource_attributes).toEqual({ 'host.ip': '[REDACTED:IP_ADDRESS]', 'service.name': 'svc' });
    expect(span['events.attributes']).toEqual([{ 'log.message': 'paid with [REDACTED:CREDIT_CARD]' }]);
    expect(span['links.attributes']).toEqual([{ 'link.note': `by ${EMAIL_MARKER}` }]);
    expect(span.input).toBe('my key is [REDACTED:API_KEY] and token [REDACTED:JWT]');
    expect(span.status_message).toBe(`upstream [REDACTED:IP_ADDRESS] refused ${EMAIL_MARKER}`);
    expect(span.name).toBe(name);
    const markers = JSON.stringify(span).match(/\[REDACTED:/g) ?? [];
    expect(count).toBe(markers.length);
    expect(count).toBe(11);
  });

  it('applies the same rules to GenAI log events', () => {
    const compiled = compile({
      capture: { inputs: 'HASH', outputs: 'FULL' },
      redaction: { detectors: ['EMAIL'], dropAttributes: ['gen_ai.system'] },
    });
    const input = `[{"role":"user","parts":[{"type":"text","content":"I am ${EMAIL}"}]}]`;
    const output = `[{"role":"assistant","parts":[{"type":"text","content":"Hello ${EMAIL}"}]}]`;
    const event: PolicyLogEvent = { name: 'gen_ai.user.message', attributes: { 'gen_ai.system': 'openai', note: EMAIL }, input, output };
    expect(compiled.applyToLogEvent(event)).toBe(2);
    expect(event).toEqual({
      name: 'gen_ai.user.message',
      attributes: { note: EMAIL_MARKER },
      input: sha256Of(input),
      output: output.replace(EMAIL, EMAIL_MARKER),
    });
  });

  it('counts a repeated short value each time it is redacted (remembered values are only the clean ones)', () => {
    const compiled = compile({ redaction: { patterns: ['CUST-\\d{6}'] } });
    const counts = [1, 2, 3].map(() => compiled.applyToSpan(spanWith({ 'app.customer': 'CUST-123456', 'app.region': 'eu-west-1' })));
    expect(counts).toEqual([1, 1, 1]);
  });

  it('drops both columns and leaves a span without cut content unmarked', () => {
    const span = spanWith({ 'input.value': 'question', 'gen_ai.request.model': 'gpt-4o' });
    compile({ capture: { inputs: 'DROP', outputs: 'DROP', maxContentBytes: 1024 } }).applyToSpan(span);
    expect({ input: span.input, output: span.output, attributes: span.attributes, truncated: span.truncated }).toEqual({
      input: '',
      output: '',
      attributes: { 'gen_ai.request.model': 'gpt-4o' },
      truncated: 0,
    });
  });

  it('takes a cut JSON attribute off the JSON keys, and keeps a whole one there', () => {
    const long = JSON.stringify([{ role: 'user', content: 'x'.repeat(400) }]);
    const short = JSON.stringify([{ role: 'assistant', content: 'ok' }]);
    const span = spanWith(
      { 'gen_ai.input.messages': long, 'gen_ai.output.messages': short },
      { attribute_json_keys: ['gen_ai.input.messages', 'gen_ai.output.messages'] },
    );
    compile({ capture: { maxContentBytes: 256 } }).applyToSpan(span);
    expect(span.attributes['gen_ai.input.messages']).toBe(truncateUtf8(long, 256));
    expect(span.attribute_json_keys).toEqual(['gen_ai.output.messages']);
  });

  it('redacts one text on request', () => {
    expect(compile({ redaction: { detectors: ['EMAIL'] } }).redactText(`${EMAIL}, ${EMAIL}`)).toEqual({
      text: `${EMAIL_MARKER}, ${EMAIL_MARKER}`,
      redactions: 2,
    });
  });
});
