import { status as GrpcStatus } from '@grpc/grpc-js';
import { graphql } from '../support';
import { startIngestHarness, type IngestHarness } from '../integration/ingest-harness';
import { PROTOBUF, grpcExport, postTraces, protobufBody, recordTrace, traceIdOf } from '../integration/raw-otlp';

/*
 * What one key can do, through the real servers: an exporter's INGEST key cannot read the
 * project's prompts or repoint its reports; a dashboard's READ key cannot send spans or change
 * configuration; an expired key is refused like a revoked one; and a GraphQL document costs
 * nothing to refuse, with or without a key.
 */

const ADMIN = 'test-admin-token-0123456789';

describe('scoped API keys and GraphQL limits', () => {
  let h: IngestHarness;
  let api: string;
  let projectId: string;
  const keys: Record<'all' | 'ingest' | 'read' | 'manage', string> = { all: '', ingest: '', read: '', manage: '' };

  const createKey = async (variables: Record<string, unknown>) => {
    const result = await graphql<{ createApiKey: { secret: string; apiKey: { scopes: string[]; expiresAt: string | null } } }>(
      api,
      'mutation($i: CreateApiKeyInput!) { createApiKey(input: $i) { secret apiKey { scopes expiresAt } } }',
      { i: { projectId, ...variables } },
      ADMIN,
    );
    expect(result.errors).toBeUndefined();
    return result.data!.createApiKey;
  };
  const code = (result: { errors?: Array<{ extensions?: { code?: string } }> }) => result.errors?.[0]?.extensions?.code;

  beforeAll(async () => {
    h = await startIngestHarness();
    api = h.api;
    const project = await h.newProject('scoped');
    projectId = project.projectId;
    keys.all = project.apiKey;
    keys.ingest = (await createKey({ name: 'exporter', scopes: ['INGEST'] })).secret;
    keys.read = (await createKey({ name: 'dashboard', scopes: ['READ'] })).secret;
    keys.manage = (await createKey({ name: 'ops', scopes: ['MANAGE'] })).secret;
  });
  afterAll(() => h?.stop());

  it('lists each key with its scopes; a key made without scopes has all three', async () => {
    const listed = await graphql<{ apiKeys: Array<{ name: string; scopes: string[] }> }>(
      api,
      'query($p: ID!) { apiKeys(projectId: $p) { name scopes } }',
      { p: projectId },
      ADMIN,
    );
    expect(Object.fromEntries(listed.data!.apiKeys.map((k) => [k.name, k.scopes]))).toEqual({
      test: ['INGEST', 'READ', 'MANAGE'],
      exporter: ['INGEST'],
      dashboard: ['READ'],
      ops: ['MANAGE'],
    });
  });

  it('lets an INGEST key export over HTTP and gRPC, and nothing else', async () => {
    const spans = recordTrace(3, 'ingest-only');
    expect((await postTraces(h.http, protobufBody(spans), { type: PROTOBUF, key: keys.ingest })).status).toBe(200);
    expect((await grpcExport(h.grpc, protobufBody(recordTrace(2, 'ingest-grpc')), keys.ingest)).code).toBe(GrpcStatus.OK);
    await h.waitForSpans(projectId, 5);

    const read = await graphql(api, '{ traces { totalCount } }', {}, keys.ingest);
    expect({ data: read.data, code: code(read) }).toEqual({ data: null, code: 'FORBIDDEN' });
    expect(read.errors![0]!.message).toMatch(/lacks the READ scope/);
    const waterfall = await fetch(`${api}/v1/traces/${traceIdOf(spans)}/waterfall.svg`, {
      headers: { authorization: `Bearer ${keys.ingest}` },
    });
    expect({ status: waterfall.status, body: await waterfall.json() }).toMatchObject({
      status: 403,
      body: { error: { code: 'FORBIDDEN' } },
    });
    const schedule = await graphql(api, '{ costReportSchedules { id } }', {}, keys.ingest);
    expect(code(schedule)).toBe('FORBIDDEN');
    const token = await graphql(
      api,
      'mutation($t: String!) { createFeedbackToken(traceId: $t, name: "x", ttlSeconds: 60) { token } }',
      { t: traceIdOf(spans) },
      keys.ingest,
    );
    expect(code(token)).toBe('FORBIDDEN');
    // Its own feedback path works: INGEST covers feedback.
    const feedback = await fetch(`${api}/v1/feedback`, {
      method: 'POST',
      headers: { authorization: `Bearer ${keys.ingest}`, 'content-type': 'application/json' },
      body: JSON.stringify({ traceId: traceIdOf(spans), name: 'ok', value: 1 }),
    });
    expect(feedback.status).toBe(202);
  });

  it('lets a READ key query, and refuses its exports (403, PERMISSION_DENIED), feedback and configuration', async () => {
    const answer = await graphql<{ traces: { totalCount: number } }>(api, '{ traces { totalCount } }', {}, keys.read);
    expect(answer.errors).toBeUndefined();
    const http = await postTraces(h.http, protobufBody(recordTrace(2, 'read-only')), { type: PROTOBUF, key: keys.read });
    expect(http.status).toBe(403);
    const grpc = await grpcExport(h.grpc, protobufBody(recordTrace(2, 'read-only-grpc')), keys.read);
    expect(grpc).toMatchObject({ code: GrpcStatus.PERMISSION_DENIED, details: expect.stringMatching(/lacks the INGEST scope/) });
    const feedback = await fetch(`${api}/v1/feedback`, {
      method: 'POST',
      headers: { authorization: `Bearer ${keys.read}`, 'content-type': 'application/json' },
      body: JSON.stringify({ traceId: '1'.repeat(32), name: 'ok', value: 1 }),
    });
    expect({ status: feedback.status, code: ((await feedback.json()) as { error: { code: string } }).error.code }).toEqual({
      status: 403,
      code: 'FORBIDDEN',
    });
    const create = await graphql(
      api,
      'mutation { createCostReportSchedule(input: { cron: "0 9 * * *", timezone: "UTC", window: "P1D", groupBy: [MODEL], webhookUrl: "https://example.com/hook" }) { signingSecret } }',
      {},
      keys.read,
    );
    expect(code(create)).toBe('FORBIDDEN');
  });

  it('lets a MANAGE key change configuration but not read the data', async () => {
    expect(code(await graphql(api, '{ costReportSchedules { id } }', {}, keys.manage))).toBeUndefined();
    expect(code(await graphql(api, '{ sessions { totalCount } }', {}, keys.manage))).toBe('FORBIDDEN');
    expect((await postTraces(h.http, protobufBody(recordTrace(1, 'manage')), { type: PROTOBUF, key: keys.manage })).status).toBe(403);
  });

  it('refuses an expired key like a revoked one: 401, UNAUTHENTICATED', async () => {
    const { secret, apiKey } = await createKey({ name: 'brief', expiresAt: new Date(Date.now() + 1_500).toISOString() });
    expect(apiKey.expiresAt).not.toBeNull();
    expect(code(await graphql(api, '{ traces { totalCount } }', {}, secret))).toBeUndefined();
    await new Promise((resolve) => setTimeout(resolve, Date.parse(apiKey.expiresAt!) - Date.now() + 100));
    expect(code(await graphql(api, '{ traces { totalCount } }', {}, secret))).toBe('UNAUTHENTICATED');
    expect((await postTraces(h.http, protobufBody(recordTrace(1, 'expired')), { type: PROTOBUF, key: secret })).status).toBe(401);
    expect((await grpcExport(h.grpc, protobufBody(recordTrace(1, 'expired-grpc')), secret)).code).toBe(GrpcStatus.UNAUTHENTICATED);
  });

  it('refuses a fragment bomb without a key before parsing it, and with a key as QUERY_TOO_EXPENSIVE, in milliseconds', async () => {
    const levels = 40;
    const bomb = `{ ...F0 } ${Array.from({ length: levels }, (_, i) => `fragment F${i} on Query { ...F${i + 1} ...F${i + 1} }`).join(' ')} fragment F${levels} on Query { __typename }`;
    const anonymous = await graphql(api, bomb);
    expect({ data: anonymous.data, code: code(anonymous) }).toEqual({ data: null, code: 'UNAUTHENTICATED' });
    const keyed = await graphql(api, bomb, {}, keys.read);
    expect({ data: keyed.data, code: code(keyed) }).toEqual({ data: null, code: 'QUERY_TOO_EXPENSIVE' });
    // The server stayed responsive throughout (it answered both; before, 22 levels took 5 s and held every request).
    expect((await fetch(`${api}/healthz`)).status).toBe(200);
  });

  it('checks a gRPC key before reading the message: an oversized export without a key is UNAUTHENTICATED, not read', async () => {
    // Over OTLP_MAX_BODY_BYTES (16 MiB): a server that read it first would answer RESOURCE_EXHAUSTED.
    const oversized = new Uint8Array(17 * 1024 * 1024);
    expect((await grpcExport(h.grpc, oversized, 'sf_not_a_key')).code).toBe(GrpcStatus.UNAUTHENTICATED);
    expect((await grpcExport(h.grpc, oversized, keys.read)).code).toBe(GrpcStatus.PERMISSION_DENIED);
    expect((await grpcExport(h.grpc, oversized, keys.ingest)).code).toBe(GrpcStatus.RESOURCE_EXHAUSTED);
  });

  it('answers introspection only with a credential', async () => {
    const anonymous = await graphql(api, '{ __schema { queryType { name } } }');
    expect(code(anonymous)).toBe('UNAUTHENTICATED');
    const keyed = await graphql<{ __schema: { queryType: { name: string } } }>(api, '{ __schema { queryType { name } } }', {}, keys.read);
    expect(keyed.data!.__schema.queryType.name).toBe('Query');
  });
});
