import { startIngestHarness, type IngestHarness } from './ingest-harness';
import { JSON_TYPE, jsonBody, recordTrace, traceIdOf } from './raw-otlp';

/*
 * A Langfuse SDK pointed at this service: it posts OTLP to /api/public/otel/v1/traces with
 * `Authorization: Basic base64(public_key:secret_key)`. The secret key is our API key; the public
 * key may be anything (docs/api.md).
 */
describe('the Langfuse SDKs as clients', () => {
  let h: IngestHarness;

  beforeAll(async () => {
    h = await startIngestHarness();
  });
  afterAll(() => h?.stop());

  it('takes their export at their path with Basic auth, and stores it', async () => {
    const project = await h.newProject('langfuse-user');
    const spans = recordTrace(4, 'langfuse');
    const authorization = `Basic ${Buffer.from(`pk-lf-anything:${project.apiKey}`).toString('base64')}`;
    const answer = await fetch(`${h.http}/api/public/otel/v1/traces`, {
      method: 'POST',
      headers: { 'content-type': JSON_TYPE, authorization, 'x-langfuse-public-key': 'pk-lf-anything' },
      body: jsonBody(spans),
    });
    expect(answer.status).toBe(200);
    await h.waitForSpans(project.projectId, spans.length, 10_000);
    // A wrong secret is refused as any wrong key is.
    const refused = await fetch(`${h.http}/api/public/otel/v1/traces`, {
      method: 'POST',
      headers: { 'content-type': JSON_TYPE, authorization: `Basic ${Buffer.from('pk-lf-anything:sk-lf-not-ours').toString('base64')}` },
      body: jsonBody(recordTrace(1, 'langfuse-refused')),
    });
    expect(refused.status).toBe(401);
  });

  it('takes their scores at /api/public/scores as feedback on the trace', async () => {
    const project = await h.newProject('langfuse-scores');
    const spans = recordTrace(2, 'scored');
    const traceId = traceIdOf(spans);
    const authorization = `Basic ${Buffer.from(`pk-lf-anything:${project.apiKey}`).toString('base64')}`;
    const score = (body: Record<string, unknown>) =>
      fetch(`${h.http}/api/public/scores`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', authorization },
        body: JSON.stringify(body),
      });
    const sent = { id: 'lf-score-1', traceId, name: 'correctness', value: 0.75, comment: 'mostly right', dataType: 'NUMERIC' };
    const answer = await score(sent);
    expect(answer.status).toBe(200);
    expect(await answer.json()).toEqual({ id: 'lf-score-1' });
    // The same score again (an SDK's retry) keeps one, as feedback does.
    expect((await score(sent)).status).toBe(200);
    const rows = await h.query<{ name: string; value_number: number; comment: string; source: string }>(
      'SELECT name, value_number, comment, source FROM feedback FINAL WHERE project_id = {p:String} AND trace_id = {t:String}',
      { p: project.projectId, t: traceId },
    );
    expect(rows).toEqual([{ name: 'correctness', value_number: 0.75, comment: 'mostly right', source: 'langfuse' }]);
    const bad = await score({ traceId: 'not-a-trace', name: 'x', value: 1 });
    expect(bad.status).toBe(400);
    expect(((await bad.json()) as { error: { code: string } }).error.code).toBe('BAD_USER_INPUT');
    const anonymous = await fetch(`${h.http}/api/public/scores`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: '{}',
    });
    expect(anonymous.status).toBe(401);
  });
});
