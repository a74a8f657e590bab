import { readFileSync } from 'node:fs';
import { runInNewContext } from 'node:vm';
import { Registry } from 'prom-client';
import { startHeapRelease } from './heap-release';
import { Logger } from './logger';
import { ShutdownSequence } from './shutdown';

/** This process's anonymous resident memory (MiB), as the kernel counts it. */
function anonymousMiB(): number {
  const kib = /^RssAnon:\s+(\d+)/m.exec(readFileSync('/proc/self/status', 'utf8'))?.[1];
  if (kib === undefined) throw new Error('/proc/self/status has no RssAnon line');
  return Number(kib) / 1024;
}

/** Fills V8's heap with short-lived objects, as a busy server does: none of them outlives the call. */
function churn(): void {
  let batch: Array<{ index: number; text: string }> = [];
  for (let index = 0; index < 3_000_000; index++) {
    batch.push({ index, text: `span-${index}` });
    if (batch.length > 200_000) batch = [];
  }
}

const log = new Logger('silent');
const releases = async (metrics: Registry) =>
  (await metrics.getSingleMetric('spanforge_heap_release_seconds')!.get()).values.find((v) =>
    (v as { metricName?: string }).metricName?.endsWith('_count'),
  )?.value ?? 0;

describe('startHeapRelease', () => {
  afterEach(() => jest.useRealTimers());

  it('hands the pages freed garbage held back to the system', () => {
    const release = startHeapRelease(0, log, new Registry(), new ShutdownSequence(log));
    const before = anonymousMiB();
    churn();
    const churned = anonymousMiB();
    // The churn must have grown the heap for the release to have something to hand back.
    expect(churned - before).toBeGreaterThan(64);
    release();
    // A regular collection would keep the emptied pages for reuse (resident); the release does not.
    expect(anonymousMiB()).toBeLessThan(churned - (churned - before) / 2);
  });

  it('runs every interval, counts each pause, and stops at shutdown', async () => {
    jest.useFakeTimers();
    const metrics = new Registry();
    const shutdown = new ShutdownSequence(log);
    startHeapRelease(30, log, metrics, shutdown);
    jest.advanceTimersByTime(29_000);
    expect(await releases(metrics)).toBe(0);
    jest.advanceTimersByTime(1_000);
    expect(await releases(metrics)).toBe(1);
    jest.advanceTimersByTime(60_000);
    expect(await releases(metrics)).toBe(3);
    await shutdown.run();
    jest.advanceTimersByTime(120_000);
    expect(await releases(metrics)).toBe(3);
  });

  it('runs none at 0 seconds, where V8 hands pages back only when the process idles', async () => {
    jest.useFakeTimers();
    const metrics = new Registry();
    startHeapRelease(0, log, metrics, new ShutdownSequence(log));
    jest.advanceTimersByTime(3_600_000);
    expect(await releases(metrics)).toBe(0);
  });

  it('leaves no gc function to other contexts', () => {
    startHeapRelease(0, log, new Registry(), new ShutdownSequence(log));
    expect(runInNewContext('typeof gc')).toBe('undefined');
  });
});
