import { status as GrpcStatus } from '@grpc/grpc-js';
import { RpcCode } from '@spanforge/otlp';
import { startIngestHarness, type IngestHarness } from '../integration/ingest-harness';
import { PROTOBUF, grpcExport, postTraces, protobufBody, recordTrace } from '../integration/raw-otlp';

/*
 * One project filling the ingest queue slows itself, not the others: with the queue deep (no
 * worker draining it here), the project holding most of the backlog gets 429 with Retry-After,
 * and another project's exports keep getting 200.
 */

const CAP = 20;

describe('the ingest queue shared between projects', () => {
  let h: IngestHarness;

  beforeAll(async () => {
    h = await startIngestHarness({ QUEUE_MAX_BACKLOG: String(CAP) }, { workers: false });
  });
  afterAll(() => h?.stop());

  /** The gateway polls the queue's depth once a second. */
  const nextPoll = () => new Promise((resolve) => setTimeout(resolve, 1_200));

  it('refuses the project over its share with 429 and keeps admitting the others', async () => {
    const [flood, steady] = [await h.newProject('flood'), await h.newProject('steady')];
    // The flood fills the queue to its cap: alone, it may (its own backlog).
    for (let i = 0; i < CAP; i++)
      expect((await postTraces(h.http, protobufBody(recordTrace(2, `flood-${i}`)), { type: PROTOBUF, key: flood.apiKey })).status).toBe(
        200,
      );
    // The steady project sends a little meanwhile.
    expect((await postTraces(h.http, protobufBody(recordTrace(2, 'steady-0')), { type: PROTOBUF, key: steady.apiKey })).status).toBe(200);
    await nextPoll();

    const refused = await postTraces(h.http, protobufBody(recordTrace(2, 'flood-more')), { type: PROTOBUF, key: flood.apiKey });
    expect(refused.status).toBe(429);
    expect(Number(refused.retryAfter)).toBeGreaterThanOrEqual(1);
    const grpc = await grpcExport(h.grpc, protobufBody(recordTrace(2, 'flood-grpc')), flood.apiKey);
    expect(grpc).toMatchObject({
      code: GrpcStatus.RESOURCE_EXHAUSTED,
      details: expect.stringMatching(/fair share of the ingest queue/),
      status: { code: RpcCode.RESOURCE_EXHAUSTED },
    });

    // The other project is not held back by the flood's backlog, past the cap too.
    for (let i = 1; i <= 3; i++)
      expect((await postTraces(h.http, protobufBody(recordTrace(2, `steady-${i}`)), { type: PROTOBUF, key: steady.apiKey })).status).toBe(
        200,
      );
  });
});
