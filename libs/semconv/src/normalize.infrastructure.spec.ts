import { SpanKind, StatusCode } from '@spanforge/otlp';
import { decodedSpan, PARENT } from './decoded-span.fixture';
import { normalizeSpan } from './normalize';

describe('normalizeSpan: Logfire', () => {
  it('drops pending spans, the placeholders Logfire sends before the real span ends', () => {
    const pending = decodedSpan({
      name: 'agent run (pending)',
      parentSpanId: PARENT,
      scope: 'pydantic-ai',
      attributes: { 'logfire.span_type': 'pending_span', 'logfire.pending_parent_id': '1a2b3c4d5e6f7a8b', 'gen_ai.usage.input_tokens': 10 },
    });
    expect(normalizeSpan(pending)).toMatchObject({ drop: true, usageIsAggregate: false });
  });

  it('keeps the real span, with pydantic-ai operation.cost as the stated cost', () => {
    const span = decodedSpan({
      name: 'chat gpt-4o',
      parentSpanId: PARENT,
      scope: 'pydantic-ai',
      attributes: {
        'logfire.span_type': 'span',
        'gen_ai.operation.name': 'chat',
        'gen_ai.system': 'openai',
        'gen_ai.request.model': 'gpt-4o',
        'gen_ai.usage.input_tokens': 1_200,
        'gen_ai.usage.cache_read.input_tokens': 1_024,
        'gen_ai.usage.details.cache_read_tokens': 1_024,
        'gen_ai.usage.output_tokens': 64,
        'operation.cost': 0.00158,
      },
    });
    const n = normalizeSpan(span);
    expect(n).toMatchObject({ drop: false, spanType: 'LLM', explicitCostUsd: 0.00158 });
    expect(n.usage).toMatchObject({ inputUncached: 1_200 - 1_024, cacheRead: 1_024 });
  });

  it('makes the root pydantic-ai v2 "agent run" span the RUN by its tracer alone', () => {
    const n = normalizeSpan(
      decodedSpan({
        name: 'agent run',
        scope: 'pydantic-ai',
        attributes: { agent_name: 'support', model_name: 'gpt-4o', 'gen_ai.usage.input_tokens': 3_000 },
      }),
    );
    expect(n).toMatchObject({ spanType: 'RUN', convention: 'gen_ai', agentName: 'support', usageIsAggregate: true });
  });
});

describe('normalizeSpan: HTTP, DB and plain spans', () => {
  it('types an HTTP client span by its method', () => {
    const n = normalizeSpan(
      decodedSpan({
        name: 'POST',
        parentSpanId: PARENT,
        kind: SpanKind.CLIENT,
        scope: '@opentelemetry/instrumentation-undici',
        attributes: {
          'http.request.method': 'POST',
          'url.full': 'https://api.openai.com/v1/chat/completions',
          'http.response.status_code': 200,
        },
      }),
    );
    expect(n).toMatchObject({ spanType: 'HTTP', convention: 'http', operation: 'POST', usageIsAggregate: false, model: '', provider: '' });
  });

  it('types an old-convention HTTP server span, and leaves a root without LLM signal as it is', () => {
    const n = normalizeSpan(
      decodedSpan({
        name: 'GET /health',
        kind: SpanKind.SERVER,
        scope: '@opentelemetry/instrumentation-http',
        attributes: { 'http.method': 'GET', 'http.route': '/health' },
      }),
    );
    expect(n).toMatchObject({ spanType: 'HTTP', operation: 'GET' });
  });

  it('upgrades a root HTTP span that carries an LLM attribute to RUN', () => {
    const n = normalizeSpan(
      decodedSpan({
        name: 'POST /chat',
        kind: SpanKind.SERVER,
        attributes: { 'http.request.method': 'POST', 'gen_ai.conversation.id': 'c-1' },
      }),
    );
    expect(n).toMatchObject({ spanType: 'RUN', convention: 'http', sessionId: 'c-1' });
  });

  it('types a DB span by db.system.name or db.system', () => {
    expect(
      normalizeSpan(
        decodedSpan({
          name: 'SELECT orders',
          parentSpanId: PARENT,
          attributes: { 'db.system.name': 'postgresql', 'db.operation.name': 'SELECT' },
        }),
      ),
    ).toMatchObject({ spanType: 'DB', operation: 'SELECT' });
    expect(
      normalizeSpan(
        decodedSpan({ name: 'pinecone.query', parentSpanId: PARENT, attributes: { 'db.system': 'pinecone', 'db.operation': 'query' } }),
      ),
    ).toMatchObject({ spanType: 'DB', operation: 'query' });
  });

  it('leaves a plain root OTHER: its LLM children are for the query-time upgrade to see', () => {
    const n = normalizeSpan(decodedSpan({ name: 'handle_turn', scope: 'my-app', attributes: { 'session.id': 's-1' } }));
    expect(n).toMatchObject({ spanType: 'OTHER', convention: 'default', sessionId: 's-1' });
  });

  it('falls back to the resource for ids', () => {
    const n = normalizeSpan(
      decodedSpan({
        name: 'x',
        parentSpanId: PARENT,
        resource: { 'session.id': 'from-resource', 'enduser.id': 'eu-5' },
        attributes: { 'user.id': '' },
      }),
    );
    expect(n).toMatchObject({ sessionId: 'from-resource', userId: 'eu-5', runId: '' });
  });

  it('reports no error type for a successful span and the exception type for a failed one', () => {
    const failed = decodedSpan({
      name: 'GET',
      parentSpanId: PARENT,
      statusCode: StatusCode.ERROR,
      attributes: { 'http.request.method': 'GET' },
      events: [{ name: 'exception', atMs: 5, attributes: { 'exception.type': 'ECONNRESET' } }],
    });
    expect(normalizeSpan(failed).errorType).toBe('ECONNRESET');
    const unset = decodedSpan({
      name: 'GET',
      parentSpanId: PARENT,
      attributes: { 'http.request.method': 'GET' },
      events: [{ name: 'exception', atMs: 5, attributes: { 'exception.type': 'Handled' } }],
    });
    expect(normalizeSpan(unset).errorType).toBe('');
  });

  it('reads iterations only when they are a non-negative integer', () => {
    expect(normalizeSpan(decodedSpan({ name: 'a', attributes: { 'gen_ai.agent.iterations': '4' } })).iterations).toBe(4);
    expect(normalizeSpan(decodedSpan({ name: 'a', attributes: { 'agent.iterations': 2.5 } })).iterations).toBeUndefined();
  });
});
