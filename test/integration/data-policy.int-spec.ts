import { createHash } from 'node:crypto';
import { graphql } from '../support';
import { startIngestHarness, type IngestHarness } from './ingest-harness';
import { JSON_TYPE, postTraces } from './raw-otlp';
import { NS_PER_MS, hex, jsonExport, jsonSpan } from './otlp-json';

/*
 * A project's data policy is applied by the worker to every span and GenAI event before anything
 * is stored: what it redacts, hashes or drops is in no stored row.
 */

const SECRETS = {
  email: 'jane.doe@example.com',
  card: '4111 1111 1111 1111',
  order: 'ACME-123456',
  apiKey: `sk-proj-${'Ab3dEf6hIj9kLm2nOp5qRs8tUv1wXy4z'}`,
  ip: '10.1.2.3',
};

const POLICY = {
  capture: { outputs: 'HASH' },
  redaction: {
    detectors: ['EMAIL', 'CREDIT_CARD', 'API_KEY', 'IP_ADDRESS'],
    patterns: ['ACME-[0-9]{6}'],
    dropAttributes: ['user.ssn', 'internal.*'],
  },
};

const SET_POLICY = `mutation($input: SetDataPolicyInput!) {
  setDataPolicy(input: $input) { projectId retentionDays capture { inputs outputs maxContentBytes } redaction { detectors patterns dropAttributes } updatedAt }
}`;

describe('data policy', () => {
  let h: IngestHarness;
  const admin = 'test-admin-token-0123456789';

  beforeAll(async () => {
    h = await startIngestHarness({ ADMIN_TOKEN: admin });
  });
  afterAll(() => h?.stop());

  it('is set by the admin or a MANAGE key of the project, and refused to other keys and to bad input with the reason', async () => {
    const project = await h.newProject('policy-access');
    const other = await h.newProject('policy-other');
    const reader = await h.services.tenancy.createApiKey(project.projectId, 'reader', { scopes: ['READ'] as never });
    const input = (change: Record<string, unknown>) => ({ input: { projectId: project.projectId, ...change } });

    const set = await graphql<{ setDataPolicy: Record<string, unknown> }>(h.api, SET_POLICY, input(POLICY), project.apiKey);
    expect(set.errors).toBeUndefined();
    expect(set.data!.setDataPolicy).toMatchObject({
      projectId: project.projectId,
      retentionDays: null,
      capture: { inputs: 'FULL', outputs: 'HASH', maxContentBytes: null },
      redaction: { patterns: POLICY.redaction.patterns, dropAttributes: POLICY.redaction.dropAttributes },
    });
    expect([...(set.data!.setDataPolicy.redaction as { detectors: string[] }).detectors].sort()).toEqual(
      [...POLICY.redaction.detectors].sort(),
    );

    // An absent field keeps its value; the admin reads the same policy.
    const adminChange = await graphql<{ setDataPolicy: { capture: { inputs: string; outputs: string } } }>(
      h.api,
      SET_POLICY,
      input({ capture: { inputs: 'HASH' } }),
      admin,
    );
    expect(adminChange.data!.setDataPolicy.capture).toMatchObject({ inputs: 'HASH', outputs: 'HASH' });
    const read = await graphql<{ dataPolicy: { capture: { inputs: string } } }>(
      h.api,
      'query($p: ID!) { dataPolicy(projectId: $p) { capture { inputs } } }',
      { p: project.projectId },
      project.apiKey,
    );
    expect(read.data!.dataPolicy.capture.inputs).toBe('HASH');

    const code = (answer: { errors?: Array<{ extensions?: Record<string, unknown> }> }) => answer.errors?.[0]?.extensions?.code;
    expect(code(await graphql(h.api, SET_POLICY, input(POLICY), reader.secret))).toBe('FORBIDDEN');
    expect(code(await graphql(h.api, SET_POLICY, input(POLICY), other.apiKey))).toBe('FORBIDDEN');
    const badPattern = await graphql(h.api, SET_POLICY, input({ redaction: { patterns: ['(unclosed'] } }), project.apiKey);
    expect(code(badPattern)).toBe('BAD_USER_INPUT');
    expect(badPattern.errors![0]!.message).toContain('(unclosed');
    const retention = await graphql(h.api, SET_POLICY, input({ retentionDays: 0 }), project.apiKey);
    expect(code(retention)).toBe('BAD_USER_INPUT');
    expect(retention.errors![0]!.message).toMatch(/retentionDays must be a whole number of days from 1 to 3650/);
  });

  it('leaves nothing it redacts, hashes or drops in the stored span or GenAI event', async () => {
    const project = await h.newProject('policy-spans');
    expect(
      (await graphql(h.api, SET_POLICY, { input: { projectId: project.projectId, ...POLICY } }, project.apiKey)).errors,
    ).toBeUndefined();

    const traceId = hex(16);
    const spanId = hex(8);
    const start = BigInt(Date.now()) * NS_PER_MS;
    const inputMessages = JSON.stringify([
      { role: 'user', parts: [{ type: 'text', content: `Email me at ${SECRETS.email}; card ${SECRETS.card}; order ${SECRETS.order}.` }] },
    ]);
    const outputMessages = JSON.stringify([{ role: 'assistant', parts: [{ type: 'text', content: 'Done, the order is on its way.' }] }]);
    const span = jsonSpan({
      traceId,
      spanId,
      name: 'chat gpt-4o-mini',
      start,
      end: start + 800n * NS_PER_MS,
      attributes: {
        'gen_ai.operation.name': { stringValue: 'chat' },
        'gen_ai.request.model': { stringValue: 'gpt-4o-mini' },
        'gen_ai.input.messages': { stringValue: inputMessages },
        'gen_ai.output.messages': { stringValue: outputMessages },
        'user.ssn': { stringValue: '078-05-1120' },
        'internal.session-token': { stringValue: 'tok-987' },
        'http.client_ip': { stringValue: SECRETS.ip },
      },
    });
    (span as { status?: unknown }).status = { code: 2, message: `provider refused key ${SECRETS.apiKey}` };
    const body = Buffer.from(
      JSON.stringify({
        resourceSpans: [
          {
            resource: {
              attributes: [
                { key: 'service.name', value: { stringValue: 'policy-test' } },
                { key: 'host.ip', value: { stringValue: SECRETS.ip } },
              ],
            },
            scopeSpans: [{ scope: { name: 'test' }, spans: [span] }],
          },
        ],
      }),
    );
    expect((await postTraces(h.http, body, { type: JSON_TYPE, key: project.apiKey })).status).toBe(200);
    const logs = Buffer.from(
      JSON.stringify({
        resourceLogs: [
          {
            resource: { attributes: [{ key: 'service.name', value: { stringValue: 'policy-test' } }] },
            scopeLogs: [
              {
                scope: { name: 'test' },
                logRecords: [
                  {
                    timeUnixNano: String(start + 10n * NS_PER_MS),
                    eventName: 'gen_ai.user.message',
                    traceId,
                    spanId,
                    body: { kvlistValue: { values: [{ key: 'content', value: { stringValue: `My email is ${SECRETS.email}` } }] } },
                  },
                ],
              },
            ],
          },
        ],
      }),
    );
    expect((await postTraces(h.http, logs, { type: JSON_TYPE, key: project.apiKey, signal: 'logs' })).status).toBe(200);
    await h.waitForSpans(project.projectId, 1, 10_000);

    const [row] = await h.query<Record<string, unknown>>('SELECT * FROM spans FINAL WHERE project_id = {p:String}', {
      p: project.projectId,
    });
    const stored = JSON.stringify(row);
    for (const [name, secret] of Object.entries(SECRETS))
      expect({ name, stored: stored.includes(secret) }).toEqual({ name, stored: false });
    const attributes = row!.attributes as Record<string, string>;
    expect(Object.keys(attributes).filter((key) => key === 'user.ssn' || key.startsWith('internal.'))).toEqual([]);
    // The messages are stored once, as the span's contents (the normaliser takes them out of the attributes).
    expect(attributes['gen_ai.input.messages']).toBeUndefined();
    expect(row!.input).toBe(
      inputMessages
        .replace(SECRETS.email, '[REDACTED:EMAIL]')
        .replace(SECRETS.card, '[REDACTED:CREDIT_CARD]')
        .replace(SECRETS.order, '[REDACTED:PATTERN]'),
    );
    expect(attributes['http.client_ip']).toBe('[REDACTED:IP_ADDRESS]');
    expect((row!.resource_attributes as Record<string, string>)['host.ip']).toBe('[REDACTED:IP_ADDRESS]');
    expect(row!.status_message).toBe('provider refused key [REDACTED:API_KEY]');
    // Outputs are kept as the hash of what was sent.
    expect(row!.output).toBe(`sha256:${createHash('sha256').update(outputMessages).digest('hex')}`);
    // The span counts the values it had redacted: one marker each, wherever it is stored.
    const markers = stored.match(/\[REDACTED:[A-Z_]+\]/g) ?? [];
    expect(Number(row!.redactions)).toBe(markers.length);

    // The GenAI event (an OTLP log record) went through the same policy.
    let events: Array<{ input: string }> = [];
    for (let i = 0; i < 100 && events.length === 0; i++) {
      events = await h.query<{ input: string }>('SELECT input FROM span_log_events WHERE project_id = {p:String}', {
        p: project.projectId,
      });
      if (events.length === 0) await new Promise((r) => setTimeout(r, 100));
    }
    expect(events).toHaveLength(1);
    expect(events[0]!.input).toContain('[REDACTED:EMAIL]');
    expect(events[0]!.input).not.toContain(SECRETS.email);
  });

  it("redacts every convention's message contents, span events and log events before any table holds them", async () => {
    const project = await h.newProject('policy-conventions');
    const policy = { redaction: { detectors: ['EMAIL', 'API_KEY', 'JWT'] } };
    expect(
      (await graphql(h.api, SET_POLICY, { input: { projectId: project.projectId, ...policy } }, project.apiKey)).errors,
    ).toBeUndefined();

    // Every text carries all three secrets; each convention sends them where its instrumentations do.
    const jwt = ['eyJhbGciOiJIUzI1NiJ9', 'eyJzdWIiOiJqYW5lIn0', 'c2lnbmF0dXJlLW9mLWEtdG9rZW4'].join('.');
    const said = (who: string) => `${who}: write to ${SECRETS.email}, key ${SECRETS.apiKey}, token ${jwt}`;
    const secrets = [SECRETS.email, SECRETS.apiKey, jwt];
    const text = (value: string) => ({ stringValue: value });
    const messages = (role: string, content: string) => JSON.stringify([{ role, parts: [{ type: 'text', content }] }]);
    const conventions: Record<string, Record<string, { stringValue: string }>> = {
      'otel-genai': {
        'gen_ai.operation.name': text('chat'),
        'gen_ai.request.model': text('gpt-4o-mini'),
        'gen_ai.system_instructions': text(JSON.stringify([{ type: 'text', content: said('system') }])),
        'gen_ai.output.messages': text(messages('assistant', said('assistant'))),
        'gen_ai.prompt.variable.customer': text(said('variable')),
      },
      openinference: {
        'openinference.span.kind': text('LLM'),
        'llm.model_name': text('gpt-4o'),
        'llm.input_messages.0.message.role': text('user'),
        'llm.input_messages.0.message.content': text(said('user')),
        'llm.input_messages.1.message.role': text('user'),
        'llm.input_messages.1.message.content': text(said('second user')),
        'llm.output_messages.0.message.role': text('assistant'),
        'llm.output_messages.0.message.content': text(said('assistant')),
        'retrieval.documents.0.document.content': text(said('document')),
      },
      openllmetry: {
        'llm.request.type': text('chat'),
        'gen_ai.request.model': text('gpt-4o'),
        'gen_ai.prompt.0.role': text('user'),
        'gen_ai.prompt.0.content': text(said('user')),
        'gen_ai.prompt.1.role': text('user'),
        'gen_ai.prompt.1.content': text(said('second user')),
        'gen_ai.completion.0.role': text('assistant'),
        'gen_ai.completion.0.content': text(said('assistant')),
        'traceloop.entity.input': text(said('entity')),
      },
      'vercel-ai-sdk': {
        'ai.operationId': text('ai.generateText.doGenerate'),
        'ai.model.id': text('gpt-4o'),
        'ai.prompt': text(JSON.stringify({ prompt: said('user') })),
        'ai.prompt.messages': text(JSON.stringify([{ role: 'user', content: [{ type: 'text', text: said('message') }] }])),
        'ai.response.text': text(said('assistant')),
      },
      langfuse: {
        'langfuse.observation.type': text('generation'),
        'langfuse.observation.model.name': text('gpt-4o'),
        'langfuse.observation.input': text(JSON.stringify({ question: said('user') })),
        'langfuse.observation.output': text(said('assistant')),
        'langfuse.trace.input': text(said('trace input')),
      },
    };

    const traceId = hex(16);
    const start = BigInt(Date.now()) * NS_PER_MS;
    const spanIds = new Map<string, string>();
    const spans = Object.entries(conventions).map(([convention, attributes], i) => {
      const spanId = hex(8);
      spanIds.set(spanId, convention);
      const span = jsonSpan({
        traceId,
        spanId,
        name: `call ${convention}`,
        start: start + BigInt(i) * NS_PER_MS,
        end: start + 500n * NS_PER_MS,
        attributes,
      });
      if (convention === 'otel-genai')
        // The GenAI input of 1.37+ as a span event, and an ordinary event whose attribute quotes a secret.
        (span as { events: unknown[] }).events = [
          {
            timeUnixNano: String(start + 5n * NS_PER_MS),
            name: 'gen_ai.client.inference.operation.details',
            attributes: [{ key: 'gen_ai.input.messages', value: text(messages('user', said('event user'))) }],
          },
          {
            timeUnixNano: String(start + 6n * NS_PER_MS),
            name: 'exception',
            attributes: [{ key: 'exception.message', value: text(said('exception')) }],
          },
        ];
      return span;
    });
    // One-event-per-message GenAI log records (semconv 1.28–1.36) on the OTel GenAI span.
    const genAiSpanId = [...spanIds].find(([, convention]) => convention === 'otel-genai')![0];
    const record = (eventName: string, body: unknown, offsetMs: bigint) => ({
      timeUnixNano: String(start + offsetMs * NS_PER_MS),
      eventName,
      traceId,
      spanId: genAiSpanId,
      body,
    });
    const logs = {
      resourceLogs: [
        {
          resource: { attributes: [{ key: 'service.name', value: text('policy-conventions') }] },
          scopeLogs: [
            {
              scope: { name: 'test' },
              logRecords: [
                record('gen_ai.user.message', { kvlistValue: { values: [{ key: 'content', value: text(said('log user')) }] } }, 7n),
                record(
                  'gen_ai.choice',
                  {
                    kvlistValue: {
                      values: [
                        { key: 'index', value: { intValue: '0' } },
                        { key: 'message', value: { kvlistValue: { values: [{ key: 'content', value: text(said('log choice')) }] } } },
                      ],
                    },
                  },
                  8n,
                ),
              ],
            },
          ],
        },
      ],
    };
    expect((await postTraces(h.http, jsonExport(spans, 'policy-conventions'), { type: JSON_TYPE, key: project.apiKey })).status).toBe(200);
    const logBody = Buffer.from(JSON.stringify(logs));
    expect((await postTraces(h.http, logBody, { type: JSON_TYPE, key: project.apiKey, signal: 'logs' })).status).toBe(200);
    await h.waitForSpans(project.projectId, spans.length, 10_000);

    // Each span's contents were read as its convention's, and every secret in them became a marker.
    const rows = await h.query<{ span_id: string; input: string; output: string; redactions: string }>(
      'SELECT span_id, input, output, redactions FROM spans FINAL WHERE project_id = {p:String}',
      { p: project.projectId },
    );
    expect(rows.map((row) => spanIds.get(row.span_id)).sort()).toEqual(Object.keys(conventions).sort());
    for (const row of rows) {
      const convention = spanIds.get(row.span_id);
      for (const marker of ['[REDACTED:EMAIL]', '[REDACTED:API_KEY]', '[REDACTED:JWT]']) {
        expect({ convention, input: row.input.includes(marker) }).toEqual({ convention, input: true });
        expect({ convention, output: row.output.includes(marker) }).toEqual({ convention, output: true });
      }
      expect({ convention, redactions: Number(row.redactions) >= 6 }).toEqual({ convention, redactions: true });
    }

    // The log events reach their table after the spans; then the figures follow in the upkeep.
    const deadline = Date.now() + 30_000;
    const count = async (table: string) =>
      Number(
        (await h.query<{ n: string }>(`SELECT count() AS n FROM ${table} WHERE project_id = {p:String}`, { p: project.projectId }))[0]?.n,
      );
    while (((await count('span_log_events')) < 2 || (await count('trace_figures')) < 1) && Date.now() < deadline)
      await new Promise((r) => setTimeout(r, 100));
    expect(await count('span_log_events')).toBe(2);

    // No table that holds project data holds any secret, in any column.
    const tables = await h.query<{ name: string }>(
      `SELECT t.name AS name FROM system.tables AS t
        WHERE t.database = currentDatabase() AND t.engine LIKE '%MergeTree%'
          AND t.name IN (SELECT table FROM system.columns WHERE database = currentDatabase() AND name = 'project_id')
        ORDER BY name`,
    );
    expect(tables.map((t) => t.name)).toEqual(expect.arrayContaining(['spans', 'span_log_events', 'span_facts', 'trace_figures']));
    const found: string[] = [];
    for (const { name } of tables) {
      const stored = JSON.stringify(await h.query(`SELECT * FROM ${name} WHERE project_id = {p:String}`, { p: project.projectId }));
      for (const secret of secrets) if (stored.includes(secret)) found.push(`${name}: ${secret}`);
    }
    expect(found).toEqual([]);
  });
});
