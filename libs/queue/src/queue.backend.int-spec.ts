import { UnrecoverableError, type Job } from 'bullmq';
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
  [
    'redis',
    () => {
      const redisUrl = testRedisUrl();
      return redisUrl ? createQueueBackend({ databaseUrl: testDatabaseUrl(), redisUrl }) : undefined;
    },
  ],
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

  describe('consumer', () => {
    it('runs every job once, finishing each with its outcome', async () => {
      if (!backend) return;
      const name = `consumer-${kind}-${Date.now()}`;
      const queue = backend.queue<{ n: number }>(name);
      const seen: number[] = [];
      const consumer = backend.consumer<{ n: number }>(
        name,
        async (job) => {
          seen.push(job.data.n);
          if (job.data.n === 3) throw new UnrecoverableError('cannot be decoded');
          return { doubled: job.data.n * 2 };
        },
        { concurrency: 4, lockDuration: 5_000, stalledInterval: 5_000, maxStalledCount: 1 },
      );
      await queue.addBulk([1, 2, 3, 4, 5].map((n) => ({ name: 'export', data: { n } })));
      const deadline = Date.now() + 10_000;
      const finished = async () => {
        const counts = await queue.getJobCounts('completed', 'failed');
        return counts.completed + counts.failed;
      };
      while (Date.now() < deadline && (await finished()) < 5) await new Promise((r) => setTimeout(r, 50));
      expect(seen.sort()).toEqual([1, 2, 3, 4, 5]);
      expect(await queue.getJobCounts('completed', 'failed', 'waiting', 'active')).toEqual({
        completed: 4,
        failed: 1,
        waiting: 0,
        active: 0,
      });
      const [failed] = await queue.getFailed();
      expect(failed!.failedReason).toBe('cannot be decoded');
      const completed = await queue.getCompleted();
      expect(completed.map((j) => j.returnvalue).sort((a, b) => a.doubled - b.doubled)).toEqual(
        [2, 4, 8, 10].map((doubled) => ({ doubled })),
      );
      expect(consumer.inFlight).toBe(0);
    });

    it('takes no job while it may not, leaving them waiting with no attempt used, and takes them once it may', async () => {
      if (!backend) return;
      const name = `consumer-may-${kind}-${Date.now()}`;
      const queue = backend.queue<{ n: number }>(name);
      let may = false;
      const seen: number[] = [];
      backend.consumer<{ n: number }>(name, async (job) => void seen.push(job.data.n), {
        concurrency: 2,
        lockDuration: 5_000,
        stalledInterval: 5_000,
        maxStalledCount: 1,
        mayTake: () => may,
      });
      const job = await queue.add('export', { n: 1 }, { attempts: 3 });
      await new Promise((r) => setTimeout(r, 1_500));
      expect(seen).toEqual([]);
      expect(await job.getState()).toBe('waiting');
      may = true;
      const deadline = Date.now() + 10_000;
      while (Date.now() < deadline && !(await job.isCompleted())) await new Promise((r) => setTimeout(r, 50));
      expect(seen).toEqual([1]);
      // Taken once, when it could be: the wait used no attempt.
      expect((await queue.getJob(job.id!))!.attemptsStarted).toBe(1);
    });

    it('keeps the lock of a job that runs longer than its lock duration, so it runs once', async () => {
      if (!backend) return;
      const name = `consumer-lock-${kind}-${Date.now()}`;
      const queue = backend.queue<{ n: number }>(name);
      let runs = 0;
      backend.consumer<{ n: number }>(
        name,
        async () => {
          runs++;
          await new Promise((r) => setTimeout(r, 3_000));
        },
        { concurrency: 2, lockDuration: 1_000, stalledInterval: 500, maxStalledCount: 5 },
      );
      const job = await queue.add('export', { n: 1 });
      const deadline = Date.now() + 15_000;
      while (Date.now() < deadline && !(await job.isCompleted())) await new Promise((r) => setTimeout(r, 100));
      expect(await job.isCompleted()).toBe(true);
      expect(runs).toBe(1);
    });

    it('fails a job the stalled-job check returned too often, without running it again', async () => {
      if (!backend) return;
      const name = `consumer-stalled-${kind}-${Date.now()}`;
      const queue = backend.queue<{ n: number }>(name);
      // A process that takes the job and dies with it: its lock (500 ms) is never renewed.
      const dying = backend.worker<{ n: number }>(name, () => new Promise(() => undefined), { autorun: false, lockDuration: 500 });
      await queue.add('export', { n: 1 }, { attempts: 3 });
      expect((await dying.getNextJob('dying-token'))?.data).toEqual({ n: 1 });
      const runs: number[] = [];
      backend.consumer<{ n: number }>(name, async (job) => void runs.push(job.data.n), {
        concurrency: 1,
        lockDuration: 500,
        stalledInterval: 300,
        maxStalledCount: 0,
      });
      const deadline = Date.now() + 10_000;
      while (Date.now() < deadline && (await queue.getJobCounts('failed')).failed === 0) await new Promise((r) => setTimeout(r, 50));
      const [failed] = await queue.getFailed();
      expect(failed?.failedReason).toBe('job stalled more than allowable limit');
      expect(runs).toEqual([]);
    });

    it('takes a job added to an emptied queue while an earlier job is still running', async () => {
      if (!backend) return;
      const name = `consumer-eager-${kind}-${Date.now()}`;
      const queue = backend.queue<{ n: number }>(name);
      const started: number[] = [];
      let releaseFirst: () => void = () => undefined;
      const firstHeld = new Promise<void>((resolve) => (releaseFirst = resolve));
      let secondStarted: () => void = () => undefined;
      const second = new Promise<void>((resolve) => (secondStarted = resolve));
      backend.consumer<{ n: number }>(
        name,
        async (job) => {
          started.push(job.data.n);
          if (job.data.n === 1) await firstHeld;
          if (job.data.n === 2) secondStarted();
        },
        { concurrency: 8, lockDuration: 5_000, stalledInterval: 5_000, maxStalledCount: 1 },
      );
      try {
        const first = await queue.add('export', { n: 1 });
        while (started.length === 0) await new Promise((r) => setTimeout(r, 20));
        // The queue is empty now and job 1 runs until released: job 2 must not wait for it.
        await new Promise((r) => setTimeout(r, 200));
        await queue.add('export', { n: 2 });
        await second;
        expect(started).toEqual([1, 2]);
        expect(await first.isActive()).toBe(true);
      } finally {
        releaseFirst();
      }
    });
  });
});
