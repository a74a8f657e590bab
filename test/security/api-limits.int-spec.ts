import { graphql } from '../support';
import { startIngestHarness, type IngestHarness } from '../integration/ingest-harness';

/*
 * One project looping queries holds its own share of the API, not everyone's: past its requests
 * in progress or its requests a second it is answered RATE_LIMITED (GraphQL, with
 * retryAfterSeconds) or 429 + Retry-After (REST), and another project's queries go through.
 */

const RATE = 5;
const CONCURRENT = 2;

describe('per-project API limits', () => {
  let h: IngestHarness;
  let api: string;

  beforeAll(async () => {
    h = await startIngestHarness({ API_REQUESTS_PER_SECOND: String(RATE), API_CONCURRENT_REQUESTS: String(CONCURRENT) });
    api = h.api;
  });
  afterAll(() => h?.stop());

  type Answer = Awaited<ReturnType<typeof graphql>>;
  const limited = (answers: Answer[]) => answers.filter((a) => a.errors?.[0]?.extensions?.code === 'RATE_LIMITED');

  it('refuses a project over its requests in progress, and not another project', async () => {
    const [busy, calm] = [await h.newProject('busy'), await h.newProject('calm')];
    const heavy = '{ traces(first: 50) { nodes { traceId } } sessions { totalCount } costBreakdown(groupBy: [MODEL, DAY]) { costUsd } }';
    const answers = await Promise.all(Array.from({ length: RATE * 2 }, () => graphql(api, heavy, {}, busy.apiKey)));
    const refused = limited(answers);
    expect(refused.length).toBeGreaterThan(0);
    expect(answers.length - refused.length).toBeGreaterThanOrEqual(CONCURRENT);
    expect(refused[0]!.data).toBeNull();
    expect((refused[0]!.errors![0]!.extensions as { retryAfterSeconds?: number }).retryAfterSeconds).toBeGreaterThanOrEqual(1);
    const other = await graphql(api, '{ traces { totalCount } }', {}, calm.apiKey);
    expect(other.errors).toBeUndefined();
  });

  it('refuses a project over its requests a second, GraphQL and REST alike, and says when to come back', async () => {
    const project = await h.newProject('looping');
    const answers: Answer[] = [];
    const started = performance.now();
    // A query that costs the engine nothing, so the loop outpaces the rate on a busy machine too.
    for (let i = 0; i < RATE * 2 + 10; i++) answers.push(await graphql(api, '{ currentProject { id } }', {}, project.apiKey));
    const elapsedSeconds = (performance.now() - started) / 1000;
    // A burst of two seconds' worth goes through, and what the bucket refilled while the loop ran
    // (a busy machine makes the loop slower); the rest does not.
    expect(answers.length - limited(answers).length).toBeLessThanOrEqual(RATE * 2 + Math.ceil(elapsedSeconds * RATE) + 1);
    expect(limited(answers).length).toBeGreaterThan(0);
    // REST alike: a burst right after (the bucket may have refilled a token or two since the loop's last request).
    const burst = await Promise.all(
      Array.from({ length: RATE }, () =>
        fetch(`${api}/v1/traces/${'a'.repeat(32)}/waterfall.svg`, { headers: { authorization: `Bearer ${project.apiKey}` } }),
      ),
    );
    const rest = burst.find((response) => response.status === 429) ?? burst[0]!;
    await Promise.all(burst.filter((response) => response !== rest).map((response) => response.arrayBuffer()));
    expect(rest.status).toBe(429);
    expect(Number(rest.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
    expect(((await rest.json()) as { error: { code: string } }).error.code).toBe('RATE_LIMITED');
    // Health is nobody's quota.
    expect((await fetch(`${api}/healthz`)).status).toBe(200);
  });
});

describe('feedback limits and batched GraphQL', () => {
  let h: IngestHarness;
  let api: string;

  beforeAll(async () => {
    h = await startIngestHarness();
    api = h.api;
  });
  afterAll(() => h?.stop());

  /** A feedback token for "thumbs" on the trace, made with the key, and a post of a score with it. */
  async function tokenPoster(apiKey: string, traceId: string): Promise<() => Promise<Response>> {
    const created = await graphql<{ createFeedbackToken: { token: string } }>(
      api,
      'mutation($t: String!) { createFeedbackToken(traceId: $t, name: "thumbs", ttlSeconds: 600) { token } }',
      { t: traceId },
      apiKey,
    );
    const token = created.data!.createFeedbackToken.token;
    return () =>
      fetch(`${api}/v1/feedback`, {
        method: 'POST',
        headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
        body: JSON.stringify({ traceId, name: 'thumbs', value: true }),
      });
  }

  it('holds a feedback token (public, in browsers) to about one post a second', async () => {
    const project = await h.newProject('tokens');
    const traceId = 'b'.repeat(32);
    const post = await tokenPoster(project.apiKey, traceId);
    const statuses: number[] = [];
    for (let i = 0; i < 6; i++) statuses.push((await post()).status);
    expect(statuses.filter((s) => s === 202).length).toBeLessThanOrEqual(3);
    expect(statuses).toContain(429);
    const refused = await post();
    expect(refused.status).toBe(429);
    expect(Number(refused.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
    expect(((await refused.json()) as { error: { code: string } }).error.code).toBe('RATE_LIMITED');
    // The project's own key is not held to the token's rate.
    const keyed = await fetch(`${api}/v1/feedback`, {
      method: 'POST',
      headers: { authorization: `Bearer ${project.apiKey}`, 'content-type': 'application/json' },
      body: JSON.stringify({ traceId, name: 'thumbs', value: false }),
    });
    expect(keyed.status).toBe(202);
  });

  it('ends the feedback tokens of a key when the key is revoked', async () => {
    const project = await h.newProject('revoked-minter');
    const post = await tokenPoster(project.apiKey, 'c'.repeat(32));
    expect((await post()).status).toBe(202);
    await h.services.tenancy.revokeApiKey(project.apiKeyId);
    await new Promise((resolve) => setTimeout(resolve, 1_100));
    const refused = await post();
    expect(refused.status).toBe(401);
    expect(((await refused.json()) as { error: { message: string } }).error.message).toMatch(/revoked/);
  });

  it('refuses a batched request with a clear error instead of an empty one', async () => {
    const project = await h.newProject('batch');
    const response = await fetch(`${api}/graphql`, {
      method: 'POST',
      headers: { authorization: `Bearer ${project.apiKey}`, 'content-type': 'application/json' },
      body: JSON.stringify([{ query: '{ traces { totalCount } }' }, { query: '{ sessions { totalCount } }' }]),
    });
    const body = (await response.json()) as { data: unknown; errors: Array<{ message: string; extensions: { code: string } }> };
    expect(body.data).toBeNull();
    expect(body.errors[0]!.extensions.code).toBe('BAD_USER_INPUT');
    expect(body.errors[0]!.message).toMatch(/one operation per request/);
  });
});
