import type { Job } from 'bullmq';
import { testDatabaseUrl, testRedisUrl } from '@spanforge/testing';
import { createQueueBackend, type QueueBackend } from './queue.backend';

/** A payload with the shapes that break naive serialisation: unicode, nesting, big and tiny numbers, nulls. */
function samplePayload(i: number) {
  return {
    exportId: `export-${i}`,
    text: 'prompt with “quotes”, emoji 🚀, NUL-free \u00e9\u4e2d',
    nested: { depth: { deeper: [1, 'two', { three: 3 }, null] } },
    int64AsString: '9223372036854775807',
    tiny: 1e-9,
    flag: i % 2 === 0,
    empty: '',
    bytes: Buffer.from(`span-bytes-${i}`).toString('base64'),
  };
}

const lanes: Array<[string, () => QueueBackend | undefined]> = [
  ['postgres', () => createQueueBackend({ databaseUrl: testDatabaseUrl() })],
  ['redis', () => {
    const redisUrl = testRedisUrl();
    return redisUrl ? createQueueBackend({ databaseUrl: testDatabaseUrl(), redisUrl }) : undefined;
  }],
];

describe.each(lanes)('BullMQ on %s', (kind, make) => {
  let backend: QueueBackend | undefined;
  beforeAll(() => {
    backend = make();
    if (!backend) process.stderr.write(`SKIPPED: the ${kind} queue lane (redis-server not installed; CI always runs it)\n`);
  });
  afterAll(async () => backend?.close());

  it('reports which backend it is and answers ping', async () => {
    if (!backend) return;
    expect(backend.kind).toBe(kind);
    await expect(backend.ping()).resolves.toBeUndefined();
  });

  it('delivers every job exactly as sent, once', async () => {
    if (!backend) return;
    const name = `roundtrip-${kind}-${Date.now()}`;
    const queue = backend.queue<ReturnType<typeof samplePayload>>(name);
    const sent = Array.from({ length: 50 }, (_, i) => samplePayload(i));
    const received: Array<{ name: string; data: unknown }> = [];
    const allReceived = new Promise<void>((resolve) => {
      backend!.worker<ReturnType<typeof samplePayload>>(
        name,
        async (job: Job) => {
          received.push({ name: job.name, data: job.data });
          if (received.length === sent.length) resolve();
        },
        { concurrency: 4 },
      );
    });
    await queue.addBulk(sent.map((data) => ({ name: 'export', data })));
    await allReceived;
    // Give a duplicate delivery the chance to show up before counting.
    await new Promise((r) => setTimeout(r, 300));
    expect(received).toHaveLength(sent.length);
    const byId = new Map(received.map((r) => [(r.data as { exportId: string }).exportId, r]));
    for (const payload of sent) {
      expect(byId.get(payload.exportId)).toEqual({ name: 'export', data: payload });
    }
    const counts = await queue.getJobCounts('completed', 'failed', 'waiting', 'active');
    expect(counts).toEqual({ completed: sent.length, failed: 0, waiting: 0, active: 0 });
  });
});
