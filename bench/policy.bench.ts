import os from 'node:os';
import {
  compilePolicy,
  DEFAULT_POLICY,
  DETECTORS,
  validatePolicy,
  type CompiledPolicy,
  type DataPolicyInput,
  type PolicySpan,
} from '@spanforge/policy';
import { prng } from './corpus';
import { argument, progress, writeResults } from './report';

/**
 * `npm run bench:policy [-- --spans N] [--rounds R]`: the cost of a data policy per span on the
 * worker's hot path, in plain node on one core. The spans are what the worker stores after
 * normalising: chat spans with a few KB of messages in input/output, tool spans with small
 * arguments and results, HTTP spans without content; about one span in five carries an address,
 * a phone number, a card number, a key or an IP address in its content. Prints µs/span for the
 * default policy (nothing to do), for all detectors with two patterns, for each detector and the
 * patterns alone, and for the capture modes.
 */

const WORDS = (
  'the agent plans a step calls a tool reads documents and answers the user with care about cost latency and tokens ' +
  'invoice order shipment refund account balance meeting schedule report quarter revenue forecast 2024 17 42 3.5 ' +
  'please could you summarise this thread and draft a reply that explains the delay in delivery'
).split(' ');
const SECRETS = [
  'jane.doe@example.com',
  '+1 (415) 555-2671',
  '4111 1111 1111 1111',
  `sk-proj-${'Ab3dE5fG7hJ9kL1mN3pQ5rS7tU9vW1xY'.repeat(2)}`,
  '192.168.10.42',
];

function prose(random: () => number, bytes: number, secretChance: number): string {
  let text = '';
  while (text.length < bytes) {
    text += WORDS[Math.floor(random() * WORDS.length)];
    text += random() < 0.08 ? '. ' : ' ';
    if (random() < secretChance) text += `${SECRETS[Math.floor(random() * SECRETS.length)]} `;
  }
  return text;
}

function messages(random: () => number, count: number, bytes: number): string {
  const list = Array.from({ length: count }, (_, i) => ({
    role: i % 2 === 0 ? 'user' : 'assistant',
    parts: [{ type: 'text', content: prose(random, bytes / count, 0.0004) }],
  }));
  return JSON.stringify(list);
}

function buildSpan(random: () => number, i: number): PolicySpan {
  const kind = random();
  const resource = {
    'service.name': 'support-agent',
    'service.version': '1.14.2',
    'deployment.environment': 'production',
    'host.name': `worker-${i % 7}`,
    'telemetry.sdk.name': 'opentelemetry',
    'telemetry.sdk.language': 'python',
    'telemetry.sdk.version': '1.38.0',
    'process.pid': String(1000 + (i % 13)),
  };
  const base = {
    resource_attributes: resource,
    'events.name': [] as string[],
    'events.attributes': [] as Array<Record<string, string>>,
    'links.attributes': [] as Array<Record<string, string>>,
    status_message: '',
    attribute_json_keys: [] as string[],
    truncated: 0,
  };
  if (kind < 0.6) {
    return {
      ...base,
      attributes: {
        'gen_ai.operation.name': 'chat',
        'gen_ai.provider.name': 'openai',
        'gen_ai.request.model': 'gpt-4o-mini',
        'gen_ai.response.model': 'gpt-4o-mini-2024-07-18',
        'gen_ai.response.id': `chatcmpl-${Math.floor(random() * 1e12).toString(36)}`,
        'gen_ai.response.finish_reasons': '["stop"]',
        'gen_ai.usage.input_tokens': String(Math.floor(random() * 3000)),
        'gen_ai.usage.output_tokens': String(Math.floor(random() * 800)),
        'gen_ai.request.temperature': '0.2',
        'gen_ai.request.max_tokens': '1024',
        'server.address': 'api.openai.com',
        'server.port': '443',
        'session.id': `sess-${i % 97}`,
        'user.id': `user-${i % 31}`,
      },
      attribute_json_keys: ['gen_ai.response.finish_reasons'],
      'events.name': ['gen_ai.content.completion.chunk'],
      'events.attributes': [{ 'gen_ai.completion.chunk.index': '0' }],
      input: messages(random, 6, 2000 + random() * 3000),
      output: messages(random, 1, 500 + random() * 1000),
    };
  }
  if (kind < 0.85) {
    return {
      ...base,
      attributes: { 'gen_ai.operation.name': 'execute_tool', 'gen_ai.tool.name': 'lookup_order', 'gen_ai.tool.call.id': `call_${i}` },
      input: JSON.stringify({ order_id: `ORD-${100000 + i}`, note: prose(random, 120, 0.004) }),
      output: JSON.stringify({ status: 'shipped', detail: prose(random, 200, 0.004) }),
    };
  }
  return {
    ...base,
    attributes: {
      'http.request.method': 'POST',
      'url.full': `https://internal.example/api/v1/orders/${i}`,
      'http.response.status_code': '200',
    },
    input: '',
    output: '',
    status_message: random() < 0.1 ? 'upstream 10.0.3.7 timed out' : '',
  };
}

/** Median µs per span of `policy` over `rounds` passes, each on fresh copies (copying is not timed). */
function measure(policy: CompiledPolicy, spans: readonly PolicySpan[], rounds: number): number {
  const perRound: number[] = [];
  for (let round = 0; round < rounds + 2; round++) {
    const copies = spans.map((span) => structuredClone(span));
    const started = process.hrtime.bigint();
    for (const span of copies) policy.applyToSpan(span);
    const elapsed = Number(process.hrtime.bigint() - started) / 1000;
    if (round >= 2) perRound.push(elapsed / copies.length); // the first two warm the JIT up
  }
  perRound.sort((a, b) => a - b);
  return Math.round(perRound[Math.floor(perRound.length / 2)] * 100) / 100;
}

function main(): void {
  const count = Number(argument('--spans', '2000'));
  const rounds = Number(argument('--rounds', '9'));
  const random = prng(42);
  const spans = Array.from({ length: count }, (_, i) => buildSpan(random, i));
  const contentBytes = spans.reduce((sum, span) => sum + Buffer.byteLength(span.input) + Buffer.byteLength(span.output), 0);
  progress(`${count} spans, ${Math.round(contentBytes / count)} bytes of input/output per span on average, ${rounds} rounds`);
  // The machine may be shared: a load above its cores inflates every figure alike.
  progress(`load average ${os.loadavg()[0].toFixed(1)} on ${os.cpus().length} cores`);

  // A pattern with a literal (case-sensitive) costs little: RE2JS looks for the literal first. One
  // without, or case-insensitive, runs RE2's DFA over every character of every text.
  const literalPatterns = ['ORD-\\d{6}', 'CUST-[0-9A-F]{8}'];
  const patterns = ['ORD-\\d{6}', '(?i)internal[-_ ]?(?:secret|password)'];
  const results: Record<string, number> = {};
  const run = (name: string, redaction: DataPolicyInput['redaction']) => {
    results[name] = measure(compilePolicy(validatePolicy({ redaction })), spans, rounds);
    progress(`${name}: ${results[name]} µs/span`);
  };
  results.defaultPolicy = measure(compilePolicy(DEFAULT_POLICY), spans, rounds);
  progress(`defaultPolicy: ${results.defaultPolicy} µs/span`);
  run('allDetectorsAndTwoPatterns', { detectors: [...DETECTORS], patterns });
  run('allDetectorsAndTwoLiteralPatterns', { detectors: [...DETECTORS], patterns: literalPatterns });
  run('allDetectors', { detectors: [...DETECTORS] });
  for (const detector of DETECTORS) run(`only${detector}`, { detectors: [detector] });
  run('onlyTwoPatterns', { patterns });
  run('onlyTwoLiteralPatterns', { patterns: literalPatterns });
  for (const [name, capture] of [
    ['hashInputsDropOutputs', { inputs: 'HASH', outputs: 'DROP' }],
    ['cap4KiB', { maxContentBytes: 4096 }],
  ] as const) {
    results[name] = measure(compilePolicy(validatePolicy({ capture })), spans, rounds);
    progress(`${name}: ${results[name]} µs/span`);
  }

  writeResults({
    policy: { spans: count, contentBytesPerSpan: Math.round(contentBytes / count), microsecondsPerSpan: results },
  });
}

main();
