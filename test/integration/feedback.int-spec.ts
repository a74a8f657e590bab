import { SpanRecorder, exportSpans, exportSucceeded, graphql, otlpExporter } from '../support';
import { expectedTrace, recordAgentTrace, sendAgentTrace } from './agent-trace';
import { startIngestHarness, type IngestHarness } from './ingest-harness';

const CALL = { model: 'gpt-4o-mini', provider: 'openai', input: 800, cacheRead: 0, output: 60 };

/** Feedback (README.md, "Feedback"): REST and GraphQL, idempotency, configs, late arrival, tokens. */
describe('feedback', () => {
  let h: IngestHarness;
  let api: string;
  let project: Awaited<ReturnType<IngestHarness['newProject']>>;
  const traceIds: string[] = [];

  const post = (body: unknown, bearer?: string) =>
    fetch(`${api}/v1/feedback`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...(bearer ? { authorization: `Bearer ${bearer}` } : {}) },
      body: JSON.stringify(body),
    });
  const q = <T>(query: string, variables: Record<string, unknown> = {}, key = project.apiKey) => graphql<T>(api, query, variables, key);
  const traceFeedback = async (traceId: string) =>
    (
      await q<{ trace: { feedback: Array<{ name: string; value: unknown; comment: string | null }> } }>(
        'query($id: String!) { trace(traceId: $id) { feedback { name value comment } } }',
        { id: traceId },
      )
    ).data!.trace.feedback;

  /** The sessions page of a project (its key's), each session with its trace count and scores. */
  const sessionNodes = async (key = project.apiKey) =>
    (
      await q<{
        sessions: {
          nodes: Array<{ sessionId: string; traceCount: number; feedback: Array<{ name: string; count: number; avg: number | null }> }>;
        };
      }>('{ sessions { nodes { sessionId traceCount feedback { name count avg } } } }', {}, key)
    ).data!.sessions.nodes;

  const sendTrace = (session: string, start: number) => sendAgentTrace(h, project, { session, calls: [CALL], start }, traceIds.length);

  beforeAll(async () => {
    h = await startIngestHarness();
    api = h.api;
    project = await h.newProject('feedback-tenant');
    for (const [i, session] of ['s1', 's1', 's2'].entries()) traceIds.push(await sendTrace(session, Date.UTC(2026, 10, 20, i)));
  });
  afterAll(() => h.stop());

  it('accepts a score over REST (202 with its id) and shows it on the trace', async () => {
    const response = await post({ traceId: traceIds[0], name: 'helpful', value: 4, comment: 'good answer', source: 'web' }, project.apiKey);
    expect(response.status).toBe(202);
    const { id } = (await response.json()) as { id: string };
    expect(id).toMatch(/[0-9a-f-]{36}/);
    expect(await traceFeedback(traceIds[0]!)).toEqual([{ name: 'helpful', value: 4, comment: 'good answer' }]);
  });

  it('keeps one score when the same id is sent twice', async () => {
    for (let i = 0; i < 2; i++)
      expect((await post({ traceId: traceIds[1], name: 'thumbs', value: true, id: 'client-42' }, project.apiKey)).status).toBe(202);
    const result = await q<{ submitFeedback: { id: string; dataType: string } }>(
      'mutation($i: FeedbackInput!) { submitFeedback(input: $i) { id dataType value } }',
      { i: { traceId: traceIds[1], name: 'thumbs', value: true, id: 'client-42' } },
    );
    expect(result.data!.submitFeedback).toMatchObject({ id: 'client-42', dataType: 'BOOLEAN' });
    expect(await traceFeedback(traceIds[1]!)).toEqual([{ name: 'thumbs', value: true, comment: null }]);
  });

  it('keeps feedback for a trace that has not arrived and shows it when it lands', async () => {
    const recorder = new SpanRecorder();
    recordAgentTrace(recorder, { session: 's3', calls: [CALL], start: Date.UTC(2026, 10, 21) });
    const spans = recorder.finished();
    const lateId = expectedTrace(spans).traceId;
    expect((await post({ traceId: lateId, name: 'helpful', value: 2 }, project.apiKey)).status).toBe(202);
    const before = await q<{ trace: null }>('query($id: String!) { trace(traceId: $id) { traceId } }', { id: lateId });
    expect(before.data!.trace).toBeNull();
    expect(exportSucceeded(await exportSpans(otlpExporter('http/protobuf', { http: h.http, grpc: h.grpc }, project.apiKey), spans))).toBe(
      true,
    );
    await h.waitForSpans(project.projectId, (traceIds.length + 1) * spans.length);
    expect(await traceFeedback(lateId)).toEqual([{ name: 'helpful', value: 2, comment: null }]);
  });

  it('refuses values that break the score config, saying why', async () => {
    const created = await q<{ createScoreConfig: { name: string } }>(
      'mutation { createScoreConfig(input: { name: "rating", dataType: NUMERIC, minValue: 1, maxValue: 5 }) { name } }',
    );
    expect(created.errors).toBeUndefined();
    await q('mutation { createScoreConfig(input: { name: "tone", dataType: CATEGORICAL, categories: ["friendly", "rude"] }) { name } }');
    const expect400 = async (body: Record<string, unknown>, message: RegExp) => {
      const response = await post({ traceId: traceIds[0], ...body }, project.apiKey);
      expect(response.status).toBe(400);
      expect(((await response.json()) as { error: { message: string } }).error.message).toMatch(message);
    };
    await expect400({ name: 'rating', value: 7 }, /at most 5/);
    await expect400({ name: 'rating', value: 'great' }, /NUMERIC/);
    await expect400({ name: 'tone', value: 'sarcastic' }, /one of: friendly, rude/);
    await expect400({ name: 'x'.repeat(101), value: 1 }, /name/);
    await expect400({ name: 'n', value: 1, comment: 'c'.repeat(4_001) }, /comment/);
    await expect400({ name: 'n', value: { nested: true } }, /number, a boolean or a string/);
    expect((await post({ traceId: 'nothex', name: 'n', value: 1 }, project.apiKey)).status).toBe(400);
    // A misspelt field is refused, named, rather than dropped (here the comment would have been lost).
    await expect400(
      { name: 'rating', value: 4, coment: 'slow answer' },
      /unknown field "coment": feedback takes traceId, spanId, name, value, comment, source, id/,
    );
    // A body that is not JSON is refused before any handler runs, in the same shape.
    const notJson = await fetch(`${api}/v1/feedback`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${project.apiKey}` },
      body: '{"traceId": ',
    });
    expect(notJson.status).toBe(400);
    expect(await notJson.json()).toEqual({ error: { code: 'BAD_USER_INPUT', message: expect.stringMatching(/JSON/i) } });
    expect((await post({ traceId: traceIds[0], name: 'tone', value: 'friendly' }, project.apiKey)).status).toBe(202);
    const invalid = await q<{ createScoreConfig: unknown }>(
      'mutation { createScoreConfig(input: { name: "bad", dataType: TEXT, minValue: 1 }) { name } }',
    );
    expect(invalid.errors![0]!.extensions!.code).toBe('BAD_USER_INPUT');
  });

  it("changes a score config's bounds, and archives it so its name takes any value or a new config", async () => {
    // On a trace no session holds: the session figures other tests check stay as they are.
    const status = (value: unknown) => post({ traceId: 'e'.repeat(32), name: 'effort', value }, project.apiKey).then((r) => r.status);
    expect(
      (await q('mutation { createScoreConfig(input: { name: "effort", dataType: NUMERIC, minValue: 1, maxValue: 5 }) { name } }')).errors,
    ).toBeUndefined();
    expect(await status(7)).toBe(400);
    const updated = await q<{ updateScoreConfig: { maxValue: number } }>(
      'mutation { updateScoreConfig(input: { name: "effort", dataType: NUMERIC, minValue: 1, maxValue: 10 }) { maxValue } }',
    );
    expect(updated.data!.updateScoreConfig.maxValue).toBe(10);
    expect(await status(7)).toBe(202);
    const retyped = await q('mutation { updateScoreConfig(input: { name: "effort", dataType: TEXT }) { name } }');
    expect(retyped.errors![0]!.message).toMatch(/type cannot change: archive it and create a new one/);
    expect((await q('mutation { archiveScoreConfig(name: "effort") { name } }')).errors).toBeUndefined();
    expect(await status('anything')).toBe(202);
    const configs = await q<{ scoreConfigs: Array<{ name: string }> }>('{ scoreConfigs { name } }');
    expect(configs.data!.scoreConfigs.map((c) => c.name)).not.toContain('effort');
    expect(
      (await q('mutation { createScoreConfig(input: { name: "effort", dataType: CATEGORICAL, categories: ["low", "high"] }) { name } }'))
        .errors,
    ).toBeUndefined();
    expect(await status('medium')).toBe(400);
    expect((await q('mutation { archiveScoreConfig(name: "nothing-here") { name } }')).errors![0]!.extensions!.code).toBe('NOT_FOUND');
  });

  it("refuses feedback without a key, or with another project's key for its own trace only", async () => {
    expect((await post({ traceId: traceIds[0], name: 'helpful', value: 1 })).status).toBe(401);
    const other = await h.newProject();
    expect((await post({ traceId: traceIds[0], name: 'helpful', value: 1 }, other.apiKey)).status).toBe(202);
    // Stored for the other project: it never shows on this project's trace.
    expect((await traceFeedback(traceIds[0]!)).filter((f) => f.name === 'helpful')).toHaveLength(1);
  });

  it('lets a browser send feedback with a token for one trace and name, until it expires', async () => {
    const made = await q<{ createFeedbackToken: { token: string } }>(
      'mutation($t: String!) { createFeedbackToken(traceId: $t, name: "thumbs", ttlSeconds: 60) { token expiresAt } }',
      { t: traceIds[2] },
    );
    const token = made.data!.createFeedbackToken.token;
    expect(token.startsWith('sffb_')).toBe(true);
    expect((await post({ traceId: traceIds[2], name: 'thumbs', value: false }, token)).status).toBe(202);
    expect((await post({ traceId: traceIds[0], name: 'thumbs', value: false }, token)).status).toBe(403);
    expect((await post({ traceId: traceIds[2], name: 'helpful', value: 5 }, token)).status).toBe(403);
    expect((await post({ traceId: traceIds[2], name: 'thumbs', value: false }, `${token.slice(0, -2)}xx`)).status).toBe(401);
    // From a page on another origin: the preflight allows the token's header, and every answer names any origin as allowed.
    const preflight = await fetch(`${api}/v1/feedback`, {
      method: 'OPTIONS',
      headers: {
        origin: 'https://app.example.com',
        'access-control-request-method': 'POST',
        'access-control-request-headers': 'authorization, content-type',
      },
    });
    expect(preflight.status).toBe(204);
    expect(preflight.headers.get('access-control-allow-origin')).toBe('*');
    expect(preflight.headers.get('access-control-allow-methods')).toContain('POST');
    expect(preflight.headers.get('access-control-allow-headers')).toContain('authorization');
    const fromPage = await fetch(`${api}/v1/feedback`, {
      method: 'POST',
      headers: { origin: 'https://app.example.com', 'content-type': 'application/json', authorization: `Bearer ${token}` },
      body: JSON.stringify({ traceId: traceIds[2], name: 'thumbs', value: true }),
    });
    expect(fromPage.status).toBe(202);
    expect(fromPage.headers.get('access-control-allow-origin')).toBe('*');
    const refusedFromPage = await fetch(`${api}/v1/feedback`, {
      method: 'POST',
      headers: { origin: 'https://app.example.com', 'content-type': 'application/json', authorization: `Bearer ${token}` },
      body: JSON.stringify({ traceId: traceIds[0], name: 'thumbs', value: true }),
    });
    expect(refusedFromPage.status).toBe(403);
    expect(refusedFromPage.headers.get('access-control-allow-origin')).toBe('*');
    // GraphQL stays same-origin: no CORS header there.
    const gql = await fetch(`${api}/graphql`, {
      method: 'POST',
      headers: { origin: 'https://app.example.com', 'content-type': 'application/json' },
      body: JSON.stringify({ query: '{ __typename }' }),
    });
    expect(gql.headers.get('access-control-allow-origin')).toBeNull();
    // The token is not an API key: it reads nothing.
    expect((await q('{ traces { totalCount } }', {}, token)).errors![0]!.extensions!.code).toBe('UNAUTHENTICATED');
    const short = await q<{ createFeedbackToken: { token: string } }>(
      'mutation($t: String!) { createFeedbackToken(traceId: $t, name: "thumbs", ttlSeconds: 1) { token } }',
      { t: traceIds[2] },
    );
    await new Promise((r) => setTimeout(r, 2_100));
    expect((await post({ traceId: traceIds[2], name: 'thumbs', value: true }, short.data!.createFeedbackToken.token)).status).toBe(401);
  });

  it('attaches score counts and means to sessions and filters traces by score', async () => {
    const s1 = (await sessionNodes()).find((n) => n.sessionId === 's1')!;
    // s1 holds traces 0 and 1: helpful 4 and tone friendly on trace 0, thumbs true on trace 1.
    expect(s1.feedback).toEqual([
      { name: 'helpful', count: 1, avg: 4 },
      { name: 'thumbs', count: 1, avg: 1 },
      { name: 'tone', count: 1, avg: null },
    ]);
    const count = async (feedback: Record<string, unknown>) =>
      (await q<{ traces: { totalCount: number } }>('query($f: TraceFilter) { traces(filter: $f) { totalCount } }', { f: { feedback } }))
        .data!.traces.totalCount;
    expect(await count({ name: 'helpful' })).toBe(2);
    expect(await count({ name: 'helpful', min: 3 })).toBe(1);
    expect(await count({ name: 'thumbs', max: 0.5 })).toBe(1);
    const sessions = async (feedback: Record<string, unknown>) =>
      (
        await q<{ sessions: { nodes: Array<{ sessionId: string }> } }>(
          'query($f: SessionFilter) { sessions(filter: $f) { nodes { sessionId } } }',
          { f: { feedback } },
        )
      )
        .data!.sessions.nodes.map((n) => n.sessionId)
        .sort();
    // helpful: 4 on s1 (trace 0), 2 on s3 (the late trace); thumbs: true on s1, false on s2.
    expect(await sessions({ name: 'helpful' })).toEqual(['s1', 's3']);
    expect(await sessions({ name: 'helpful', min: 3 })).toEqual(['s1']);
    expect(await sessions({ name: 'thumbs', max: 0.5 })).toEqual(['s2']);
  });

  it('takes many scores at once, and each answer comes after its score shows on the session', async () => {
    const values = Array.from({ length: 40 }, (_, i) => 1 + (i % 5));
    const responses = await Promise.all(values.map((value) => post({ traceId: traceIds[2], name: 'rating', value }, project.apiKey)));
    expect(responses.map((r) => r.status)).toEqual(values.map(() => 202));
    const ids = await Promise.all(responses.map(async (r) => ((await r.json()) as { id: string }).id));
    expect(new Set(ids).size).toBe(values.length);
    const s2 = (await sessionNodes()).find((n) => n.sessionId === 's2')!;
    const mean = values.reduce((a, b) => a + b, 0) / values.length;
    expect(s2.feedback.find((f) => f.name === 'rating')).toEqual({ name: 'rating', count: values.length, avg: mean });
  });

  it("counts a session's traces with and without scores, and a session no trace of which has one shows none", async () => {
    // A project of its own: its sessions hold only these traces.
    const own = await h.newProject('feedback-sessions');
    const sent: string[] = [];
    for (const [i, session] of ['x1', 'x1', 'x2'].entries())
      sent.push(await sendAgentTrace(h, own, { session, calls: [CALL], start: Date.UTC(2026, 10, 22, i) }, sent.length));
    // A score on x1's first trace; the answer comes after it shows on the session.
    expect((await post({ traceId: sent[0], name: 'solo', value: 5 }, own.apiKey)).status).toBe(202);
    // x2's figures come from the worker's upkeep of its trace: wait for them (at most 30 s).
    const deadline = Date.now() + 30_000;
    while (!(await sessionNodes(own.apiKey)).some((n) => n.sessionId === 'x2') && Date.now() < deadline)
      await new Promise((r) => setTimeout(r, 200));
    const nodes = Object.fromEntries((await sessionNodes(own.apiKey)).map((n) => [n.sessionId, n]));
    // x1: two traces, one scored once (5); the unscored trace adds no score and no name.
    expect(nodes.x1).toEqual({ sessionId: 'x1', traceCount: 2, feedback: [{ name: 'solo', count: 1, avg: 5 }] });
    expect(nodes.x2).toEqual({ sessionId: 'x2', traceCount: 1, feedback: [] });
  });
});
