import { readFileSync } from 'node:fs';
import { runInNewContext } from 'node:vm';
import { Registry } from 'prom-client';
import { collectionFunction, startHeapRelease } from './heap-release';
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

  it('hands back the pages that a regular collection keeps', () => {
    const release = startHeapRelease(0, log, new Registry(), new ShutdownSequence(log));
    // Pages other suites in this process emptied are handed back first: the churn then maps its own.
    release();
    const before = anonymousMiB();
    churn();
    const churned = anonymousMiB();
    expect(churned - before).toBeGreaterThan(64);
    // A regular full collection frees the garbage and keeps the emptied pages for reuse, resident.
    collectionFunction()({ type: 'major', execution: 'sync', flavor: 'regular' });
    const kept = anonymousMiB();
    release();
    expect(anonymousMiB()).toBeLessThan(kept - (churned - before) / 2);
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
    // The release takes V8's function at its first run.
    startHeapRelease(0, log, new Registry(), new ShutdownSequence(log))();
    expect(runInNewContext('typeof gc')).toBe('undefined');
  });
});
