import { startIngestHarness, type IngestHarness } from './ingest-harness';
import { JSON_TYPE, jsonBody, recordTrace } from './raw-otlp';

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
});
