import { status as GrpcStatus } from '@grpc/grpc-js';
import { Queue } from 'bullmq';
import { RpcCode } from '@spanforge/otlp';
import { IngestJobName } from '@spanforge/queue';
import { exportSpans, exportSucceeded, graphql, otlpExporter } from '../support';
import { startIngestHarness, type IngestHarness } from './ingest-harness';
import {
  JSON_TYPE,
  PROTOBUF,
  ZERO_TRACE_ID,
  broken,
  exportResponseOf,
  grpcExport,
  gzipOfZeros,
  jsonBody,
  logsProtobufBody,
  postTraces,
  protobufBody,
  recordTrace,
  statusOf,
  traceIdOf,
  unknownKey,
  type HttpAnswer,
} from './raw-otlp';

/*
 * Every documented answer (README.md, "Sending traces") of OTLP/HTTP /v1/traces and OTLP/gRPC
 * Export, in the request's own content type, and that a refused export stores nothing while an acknowledged one is stored.
 */

type Project = Awaited<ReturnType<IngestHarness['newProject']>>;

const COUNT_SQL = 'SELECT count() AS n FROM spans FINAL WHERE project_id = {p:String}';
const TRACES_SQL = 'SELECT count() AS n FROM spans FINAL WHERE trace_id IN {ids:Array(String)}';

interface IngestMinute {
  minute: string;
  received: number;
  accepted: number;
  rejected: number;
  rateLimited: number;
  refused: number;
  rejectedByReason: Array<{ reason: string; spans: number }>;
}

/** A project's ingestStats once their accepted and refused spans add up to `until` (accounting is written in its own batches). */
async function ingestStats(api: string, apiKey: string, until: (minutes: IngestMinute[]) => boolean): Promise<IngestMinute[]> {
  const ask = async () => {
    const result = await graphql<{ ingestStats: IngestMinute[] }>(
      api,
      '{ ingestStats { minute received accepted rejected rateLimited refused rejectedByReason { reason spans } } }',
      {},
      apiKey,
    );
    expect(result.errors).toBeUndefined();
    return result.data!.ingestStats;
  };
  let minutes = await ask();
  for (let i = 0; i < 100 && !until(minutes); i++) {
    await new Promise((r) => setTimeout(r, 100));
    minutes = await ask();
  }
  return minutes;
}

const sum = (minutes: IngestMinute[], field: 'received' | 'accepted' | 'rejected' | 'rateLimited' | 'refused') =>
  minutes.reduce((n, m) => n + m[field], 0);

async function count(h: IngestHarness, sql: string, params: Record<string, unknown>): Promise<number> {
  const [row] = await h.query<{ n: string }>(sql, params);
  return Number(row?.n ?? 0);
}

/**
 * A refusal stored nothing: a one-span marker sent after it on the same project (any job the
 * refusal had made would be queued ahead of it) is stored, alone, and no span of the refused
 * traces exists in any project.
 */
async function expectNothingStored(h: IngestHarness, project: Project, refusedTraceIds: string[], key = project.apiKey): Promise<void> {
  const marker = await postTraces(h.http, protobufBody(recordTrace(1, 'marker')), { type: PROTOBUF, key });
  expect(marker.status).toBe(200);
  await h.waitForSpans(project.projectId, 1);
  expect(await count(h, COUNT_SQL, { p: project.projectId })).toBe(1);
  if (refusedTraceIds.length > 0) expect(await count(h, TRACES_SQL, { ids: refusedTraceIds })).toBe(0);
}

function expectRefusal(answer: HttpAnswer, status: number, type: string, code: RpcCode, message: RegExp): void {
  expect({ status: answer.status, type: answer.type }).toEqual({ status, type });
  expect(statusOf(answer)).toMatchObject({ code, message: expect.stringMatching(message) });
}

const endpoints = (h: IngestHarness) => ({ http: h.http, grpc: `http://${h.grpc}` });

/** Retry-After in delay-seconds (not the HTTP-date form), at least 1, and the Status body's RetryInfo says the same. */
function expectRetryAfter(answer: HttpAnswer): number {
  expect(answer.retryAfter).toMatch(/^[1-9]\d*$/);
  expect(statusOf(answer).retryDelaySeconds).toBe(Number(answer.retryAfter));
  return Number(answer.retryAfter);
}

async function expectReady(h: IngestHarness): Promise<void> {
  expect((await fetch(`${h.http}/readyz`)).status).toBe(200);
}

describe('OTLP ingest answers (default limits)', () => {
  let h: IngestHarness;
  let api: string;
  beforeAll(async () => {
    h = await startIngestHarness();
    api = h.api;
  });
  afterAll(() => h?.stop());
  afterEach(() => expectReady(h));

  describe('200', () => {
    it.each([
      ['protobuf', PROTOBUF, protobufBody],
      ['JSON', JSON_TYPE, jsonBody],
    ])('acknowledges a valid %s export with no partial_success and stores every span', async (_name, type, serialize) => {
      const project = await h.newProject();
      const spans = recordTrace(4);
      const answer = await postTraces(h.http, serialize(spans), { type, key: project.apiKey });

      expect({ status: answer.status, type: answer.type }).toEqual({ status: 200, type });
      expect(exportResponseOf(answer)).toBeUndefined();
      await h.waitForSpans(project.projectId, spans.length);
      expect(await count(h, COUNT_SQL, { p: project.projectId })).toBe(spans.length);
    });

    it('answers partial_success for a hand-made JSON export with broken spans and stores the rest', async () => {
      const project = await h.newProject();
      const spans = recordTrace(6);
      const request = JSON.parse(Buffer.from(jsonBody(spans)).toString('utf8')) as {
        resourceSpans: { scopeSpans: { spans: Record<string, string>[] }[] }[];
      };
      const sent = request.resourceSpans[0]!.scopeSpans[0]!.spans;
      const [zeroTrace, endsEarly] = [[sent[1]!], [sent[2]!, sent[3]!]];
      for (const span of zeroTrace) span.traceId = ZERO_TRACE_ID;
      for (const span of endsEarly) span.endTimeUnixNano = String(BigInt(span.startTimeUnixNano!) - 1n);
      const valid = sent.length - zeroTrace.length - endsEarly.length;

      const answer = await postTraces(h.http, Buffer.from(JSON.stringify(request)), { type: JSON_TYPE, key: project.apiKey });

      expect({ status: answer.status, type: answer.type }).toEqual({ status: 200, type: JSON_TYPE });
      const partial = exportResponseOf(answer);
      expect(partial?.rejectedSpans).toBe(zeroTrace.length + endsEarly.length);
      expect(partial?.errorMessage).toContain(`${zeroTrace.length} invalid_trace_id`);
      expect(partial?.errorMessage).toContain(`${endsEarly.length} end_before_start`);
      await h.waitForSpans(project.projectId, valid);
      expect(await count(h, COUNT_SQL, { p: project.projectId })).toBe(valid);
      // ingestStats tells the same story, per minute and per reason.
      const minutes = await ingestStats(api, project.apiKey, (m) => sum(m, 'accepted') + sum(m, 'rejected') >= sent.length);
      expect({
        received: sum(minutes, 'received'),
        accepted: sum(minutes, 'accepted'),
        rejected: sum(minutes, 'rejected'),
        rateLimited: sum(minutes, 'rateLimited'),
      }).toEqual({
        received: sent.length,
        accepted: valid,
        rejected: zeroTrace.length + endsEarly.length,
        rateLimited: 0,
      });
      const reasons = Object.fromEntries(minutes.flatMap((m) => m.rejectedByReason).map((r) => [r.reason, r.spans]));
      expect(reasons).toEqual({ invalid_trace_id: zeroTrace.length, end_before_start: endsEarly.length });
      for (const m of minutes) expect(Math.abs(Date.parse(m.minute) - Date.now())).toBeLessThan(5 * 60_000);
      expect(minutes.every((m) => /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:00\.000Z$/.test(m.minute))).toBe(true);
    });

    it('answers partial_success in protobuf for spans a broken SDK sent', async () => {
      const project = await h.newProject();
      const [first, ...rest] = recordTrace(5);
      const spans = [broken(first!, { traceId: ZERO_TRACE_ID }), ...rest];
      const answer = await postTraces(h.http, protobufBody(spans), { type: PROTOBUF, key: project.apiKey });

      expect({ status: answer.status, type: answer.type }).toEqual({ status: 200, type: PROTOBUF });
      expect(exportResponseOf(answer)).toEqual({ rejectedSpans: 1, errorMessage: expect.stringMatching(/invalid_trace_id/) });
      await h.waitForSpans(project.projectId, rest.length);
      expect(await count(h, COUNT_SQL, { p: project.projectId })).toBe(rest.length);
    });
  });

  describe('400', () => {
    const spans = recordTrace(3, 'bad body');
    const whole = protobufBody(spans);
    it.each([
      ['a truncated protobuf export', PROTOBUF, () => whole.subarray(0, whole.length - 7), undefined, /truncated/, [traceIdOf(spans)]],
      ['malformed JSON', JSON_TYPE, () => Buffer.from('{"resourceSpans": [{"scopeSpans": ['), undefined, /JSON/, []],
      [
        'an OTLP logs export',
        PROTOBUF,
        logsProtobufBody,
        undefined,
        /an OTLP logs export .*sent to the traces endpoint: send logs to \/v1\/logs/,
        [],
      ],
      ['Content-Encoding: gzip on a plain body', PROTOBUF, () => whole, 'gzip', /gzip/, [traceIdOf(spans)]],
    ])('refuses %s as INVALID_ARGUMENT in the request content type', async (_name, type, body, encoding, message, traceIds) => {
      const project = await h.newProject();
      const answer = await postTraces(h.http, body(), { type, key: project.apiKey, encoding });

      expectRefusal(answer, 400, type, RpcCode.INVALID_ARGUMENT, message);
      await expectNothingStored(h, project, traceIds);
    });
  });

  describe('401', () => {
    it.each([
      ['no key', undefined, PROTOBUF],
      ['an unknown well-formed key', unknownKey(), JSON_TYPE],
      ['a garbage key', 'hunter2', PROTOBUF],
    ])('refuses %s as UNAUTHENTICATED', async (_name, key, type) => {
      const project = await h.newProject();
      const spans = recordTrace(2);
      const answer = await postTraces(h.http, type === PROTOBUF ? protobufBody(spans) : jsonBody(spans), { type, key });

      expectRefusal(answer, 401, type, RpcCode.UNAUTHENTICATED, /API key/);
      await expectNothingStored(h, project, [traceIdOf(spans)]);
    });

    it('refuses a revoked key within 1 s, on HTTP and gRPC', async () => {
      const project = await h.newProject();
      expect((await postTraces(h.http, protobufBody(recordTrace(1)), { type: PROTOBUF, key: project.apiKey })).status).toBe(200);
      await h.waitForSpans(project.projectId, 1);

      await h.services.tenancy.revokeApiKey(project.apiKeyId);
      const revokedAt = Date.now();
      const spans = recordTrace(2);
      let answer = await postTraces(h.http, protobufBody(spans), { type: PROTOBUF, key: project.apiKey });
      while (answer.status === 200 && Date.now() - revokedAt < 1_000)
        answer = await postTraces(h.http, protobufBody(spans), { type: PROTOBUF, key: project.apiKey });

      expectRefusal(answer, 401, PROTOBUF, RpcCode.UNAUTHENTICATED, /API key/);
      expect((await grpcExport(h.grpc, protobufBody(spans), project.apiKey)).code).toBe(GrpcStatus.UNAUTHENTICATED);
      // Nothing of the refused trace, checked with a second key of the same project.
      const { secret } = await h.services.tenancy.createApiKey(project.projectId, 'after revocation');
      await postTraces(h.http, protobufBody(recordTrace(1, 'marker')), { type: PROTOBUF, key: secret });
      await h.waitForSpans(project.projectId, 2);
      expect(await count(h, COUNT_SQL, { p: project.projectId })).toBe(2);
      expect(await count(h, TRACES_SQL, { ids: [traceIdOf(spans)] })).toBe(0);
    });

    it('accepts a valid key in Authorization: Bearer and in x-api-key', async () => {
      const project = await h.newProject();
      const [bearer, header] = [recordTrace(2), recordTrace(3)];
      const answers = [
        await postTraces(h.http, protobufBody(bearer), { type: PROTOBUF, key: project.apiKey, keyHeader: 'authorization' }),
        await postTraces(h.http, jsonBody(header), { type: JSON_TYPE, key: project.apiKey, keyHeader: 'x-api-key' }),
      ];
      expect(answers.map((a) => [a.status, a.type])).toEqual([
        [200, PROTOBUF],
        [200, JSON_TYPE],
      ]);
      await h.waitForSpans(project.projectId, bearer.length + header.length);
      expect(await count(h, COUNT_SQL, { p: project.projectId })).toBe(bearer.length + header.length);
    });
  });

  describe('415', () => {
    it.each([
      ['text/plain', 'text/plain'],
      ['no Content-Type', undefined],
    ])('refuses %s, answering in JSON', async (_name, type) => {
      const project = await h.newProject();
      const spans = recordTrace(2);
      const answer = await postTraces(h.http, jsonBody(spans), { type, key: project.apiKey });

      expectRefusal(answer, 415, JSON_TYPE, RpcCode.INVALID_ARGUMENT, /application\/x-protobuf or application\/json/);
      await expectNothingStored(h, project, [traceIdOf(spans)]);
    });
  });

  describe('429', () => {
    it('refuses exports over the project rate with Retry-After, and gRPC with RESOURCE_EXHAUSTED + RetryInfo', async () => {
      const project = await h.newProject();
      const perSecond = 5;
      // Set through the admin API before the project's first export (the gateway caches limits for 30 s).
      const set = await graphql(
        api,
        'mutation($i: IngestLimitsInput!) { setIngestLimits(input: $i) { spansPerSecond } }',
        { i: { projectId: project.projectId, spansPerSecond: perSecond } },
        h.services.adminToken!,
      );
      expect(set.errors).toBeUndefined();
      const burst = 2 * perSecond;
      const batch = Math.ceil((burst * 2) / 3); // two batches overrun the 2 s burst, one does not
      const [admitted, overJson, overProto, overGrpc] = [recordTrace(batch), recordTrace(batch), recordTrace(batch), recordTrace(batch)];

      expect((await postTraces(h.http, protobufBody(admitted), { type: PROTOBUF, key: project.apiKey })).status).toBe(200);
      const answers = [
        await postTraces(h.http, jsonBody(overJson), { type: JSON_TYPE, key: project.apiKey }),
        await postTraces(h.http, protobufBody(overProto), { type: PROTOBUF, key: project.apiKey }),
      ];
      const grpc = await grpcExport(h.grpc, protobufBody(overGrpc), project.apiKey);

      // The wait for `batch` tokens when `burst - batch` are left; refill since then only shortens it.
      const longestWait = Math.ceil((batch - (burst - batch)) / perSecond);
      expectRefusal(answers[0]!, 429, JSON_TYPE, RpcCode.RESOURCE_EXHAUSTED, /rate/);
      expectRefusal(answers[1]!, 429, PROTOBUF, RpcCode.RESOURCE_EXHAUSTED, /rate/);
      for (const answer of answers) expect(expectRetryAfter(answer)).toBeLessThanOrEqual(longestWait);
      expect(grpc).toMatchObject({
        code: GrpcStatus.RESOURCE_EXHAUSTED,
        details: expect.stringMatching(/rate/),
        status: { code: RpcCode.RESOURCE_EXHAUSTED },
      });
      expect(grpc.status?.retryDelaySeconds).toBeGreaterThanOrEqual(1);

      await h.waitForSpans(project.projectId, admitted.length);
      expect(await count(h, TRACES_SQL, { ids: [overJson, overProto, overGrpc].map(traceIdOf) })).toBe(0);
      expect(await count(h, COUNT_SQL, { p: project.projectId })).toBe(admitted.length);
      // ingestStats: the admitted export accepted, the three refused ones counted as rate-limited.
      const limited = overJson.length + overProto.length + overGrpc.length;
      const minutes = await ingestStats(
        api,
        project.apiKey,
        (m) => sum(m, 'accepted') >= admitted.length && sum(m, 'rateLimited') >= limited,
      );
      expect({ accepted: sum(minutes, 'accepted'), rateLimited: sum(minutes, 'rateLimited'), rejected: sum(minutes, 'rejected') }).toEqual({
        accepted: admitted.length,
        rateLimited: limited,
        rejected: 0,
      });
    });
  });

  describe('503', () => {
    it('refuses with Retry-After (gRPC UNAVAILABLE) while the queue fails, and stores exactly the acknowledged exports', async () => {
      const project = await h.newProject();
      const plan = [
        { via: PROTOBUF, refuse: false },
        { via: JSON_TYPE, refuse: true },
        { via: PROTOBUF, refuse: true },
        { via: JSON_TYPE, refuse: false },
        { via: 'grpc', refuse: true },
        { via: PROTOBUF, refuse: false },
      ];
      // Fault injection at the queue seam: the n-th export job of this project fails when plan[n] says so.
      let call = 0;
      const add = Queue.prototype.add as (...args: unknown[]) => ReturnType<Queue['add']>;
      const spy = jest.spyOn(Queue.prototype, 'add').mockImplementation(function (
        this: Queue,
        name: string,
        data: unknown,
        options?: unknown,
      ) {
        const ours = name === IngestJobName.Export && (data as { projectId: string }).projectId === project.projectId;
        if (ours && plan[call++]?.refuse) return Promise.reject(new Error('injected: queue unreachable'));
        return add.call(this, name, data, options);
      });
      const acknowledged: [traceId: string, spans: number][] = [];
      try {
        for (const [i, step] of plan.entries()) {
          const spans = recordTrace(i + 1);
          if (step.via === 'grpc') {
            const answer = await grpcExport(h.grpc, protobufBody(spans), project.apiKey);
            expect(answer).toMatchObject({
              code: GrpcStatus.UNAVAILABLE,
              status: { code: RpcCode.UNAVAILABLE, retryDelaySeconds: expect.any(Number) },
            });
            if (answer.code === GrpcStatus.OK) acknowledged.push([traceIdOf(spans), spans.length]);
            continue;
          }
          const answer = await postTraces(h.http, step.via === PROTOBUF ? protobufBody(spans) : jsonBody(spans), {
            type: step.via,
            key: project.apiKey,
          });
          if (answer.status === 200) acknowledged.push([traceIdOf(spans), spans.length]);
          if (!step.refuse) {
            expect({ status: answer.status, type: answer.type }).toEqual({ status: 200, type: step.via });
            continue;
          }
          expectRefusal(answer, 503, step.via, RpcCode.UNAVAILABLE, /queue/);
          expectRetryAfter(answer);
        }
      } finally {
        spy.mockRestore();
      }

      await h.waitForSpans(
        project.projectId,
        acknowledged.reduce((sum, [, n]) => sum + n, 0),
      );
      const stored = await h.query<{ trace_id: string; n: string }>(
        'SELECT trace_id, count() AS n FROM spans FINAL WHERE project_id = {p:String} GROUP BY trace_id',
        {
          p: project.projectId,
        },
      );
      const sorted = (rows: [string, number][]) => [...rows].sort(([a], [b]) => a.localeCompare(b));
      expect(sorted(stored.map((r) => [r.trace_id, Number(r.n)]))).toEqual(sorted(acknowledged));
    });
  });

  describe('gRPC', () => {
    it.each([
      ['no metadata', undefined],
      ['a garbage key', 'hunter2'],
      ['an unknown well-formed key', unknownKey()],
    ])('answers UNAUTHENTICATED for %s', async (_name, key) => {
      const project = await h.newProject();
      const spans = recordTrace(2);
      const answer = await grpcExport(h.grpc, protobufBody(spans), key);

      expect(answer).toMatchObject({ code: GrpcStatus.UNAUTHENTICATED, details: expect.stringMatching(/API key/) });
      await expectNothingStored(h, project, [traceIdOf(spans)]);
    });

    it('answers INVALID_ARGUMENT for undecodable bytes', async () => {
      const project = await h.newProject();
      const spans = recordTrace(2);
      const whole = protobufBody(spans);
      const answer = await grpcExport(h.grpc, whole.subarray(0, whole.length - 7), project.apiKey);

      expect(answer.code).toBe(GrpcStatus.INVALID_ARGUMENT);
      expect(answer.details).not.toBe('');
      await expectNothingStored(h, project, [traceIdOf(spans)]);
    });

    it('answers OK with partial_success counting the broken spans, and stores the rest', async () => {
      const project = await h.newProject();
      const [first, second, ...rest] = recordTrace(5);
      const invalid = [broken(first!, { endTime: [first!.startTime[0] - 1, 0] }), broken(second!, { traceId: ZERO_TRACE_ID })];
      const answer = await grpcExport(h.grpc, protobufBody([...invalid, ...rest]), project.apiKey);

      expect(answer.code).toBe(GrpcStatus.OK);
      expect(exportResponseOf(answer.response!)).toEqual({
        rejectedSpans: invalid.length,
        errorMessage: expect.stringMatching(/end_before_start.*invalid_trace_id|invalid_trace_id.*end_before_start/),
      });
      await h.waitForSpans(project.projectId, rest.length);
      expect(await count(h, COUNT_SQL, { p: project.projectId })).toBe(rest.length);
    });

    it('the real OTel gRPC exporter succeeds with a valid key and fails with a revoked one', async () => {
      const project = await h.newProject();
      const spans = recordTrace(3);
      expect(exportSucceeded(await exportSpans(otlpExporter('grpc', endpoints(h), project.apiKey), spans))).toBe(true);
      await h.services.tenancy.revokeApiKey(project.apiKeyId);
      expect(exportSucceeded(await exportSpans(otlpExporter('grpc', endpoints(h), project.apiKey), recordTrace(2)))).toBe(false);
      await h.waitForSpans(project.projectId, spans.length);
      expect(await count(h, COUNT_SQL, { p: project.projectId })).toBe(spans.length);
    });
  });
});

describe('OTLP ingest answers with OTLP_MAX_BODY_BYTES=65536', () => {
  const cap = 65_536;
  let h: IngestHarness;
  beforeAll(async () => {
    h = await startIngestHarness({ OTLP_MAX_BODY_BYTES: String(cap) });
  });
  afterAll(() => h?.stop());
  afterEach(() => expectReady(h));

  describe('413', () => {
    // The reply must be a 413, not a reset connection: the client must learn not to retry.
    it('refuses a body over the cap', async () => {
      const project = await h.newProject();
      const spans = recordTrace(2, 'over', { 'test.padding': 'x'.repeat(2 * cap) });
      const body = protobufBody(spans);
      expect(body.length).toBeGreaterThan(cap);

      expectRefusal(
        await postTraces(h.http, body, { type: PROTOBUF, key: project.apiKey }),
        413,
        PROTOBUF,
        RpcCode.INVALID_ARGUMENT,
        /OTLP_MAX_BODY_BYTES/,
      );
      await expectNothingStored(h, project, [traceIdOf(spans)]);
    });

    it('accepts a body under the cap; gRPC refuses one over it with RESOURCE_EXHAUSTED', async () => {
      const project = await h.newProject();
      const [over, under] = [
        recordTrace(2, 'over', { 'test.padding': 'x'.repeat(cap) }),
        recordTrace(2, 'under', { 'test.padding': 'x'.repeat(cap / 2) }),
      ];
      const [overBody, underBody] = [protobufBody(over), protobufBody(under)];
      expect({ over: overBody.length > cap, under: underBody.length < cap }).toEqual({ over: true, under: true });

      expect(await grpcExport(h.grpc, overBody, project.apiKey)).toMatchObject({ code: GrpcStatus.RESOURCE_EXHAUSTED });
      expect((await postTraces(h.http, underBody, { type: PROTOBUF, key: project.apiKey })).status).toBe(200);
      await h.waitForSpans(project.projectId, under.length);
      expect(await count(h, COUNT_SQL, { p: project.projectId })).toBe(under.length);
      expect(await count(h, TRACES_SQL, { ids: [traceIdOf(over)] })).toBe(0);
    });

    // 64 MiB inflate from ~64 KB, 256 MiB from ~256 KB; both arrive in several pieces. Sizes this big
    // keep the memory check clear of this process's own noise (chDB and the worker share it; a 16 MiB
    // case once grew 5.6 MiB without inflating anything past the cap).
    it.each([64, 256])('refuses a gzip bomb inflating to %i MiB after inflating no more than the cap', async (mebibytes) => {
      const project = await h.newProject();
      const inflated = mebibytes * 1024 * 1024;
      const bomb = await gzipOfZeros(inflated);
      const rssBefore = process.memoryUsage().rss;
      const startedAt = performance.now();
      const answer = await postTraces(h.http, bomb, { type: JSON_TYPE, key: project.apiKey, encoding: 'gzip' });
      const elapsedMs = performance.now() - startedAt;
      const rssGrowth = process.memoryUsage().rss - rssBefore;

      expectRefusal(answer, 413, JSON_TYPE, RpcCode.INVALID_ARGUMENT, /OTLP_MAX_BODY_BYTES/);
      expect(elapsedMs).toBeLessThan(2_000);
      expect(rssGrowth).toBeLessThan(inflated / 4);
      await expectNothingStored(h, project, []);
    });
  });
});
