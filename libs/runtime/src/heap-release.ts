import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { Histogram, type Registry } from 'prom-client';
import type { Logger } from './logger';
import type { ShutdownSequence } from './shutdown';

/** V8's collection function, as `--expose-gc` exposes it: the `last-resort` flavor hands memory back. */
export type Collect = (options: { type: 'major'; execution: 'sync'; flavor: 'regular' | 'last-resort' }) => void;

/**
 * V8's collection function: the global one when node was started with `--expose-gc`; otherwise
 * taken from a context made while the flag is set. The flag is then unset again, so that no other
 * context (a test runner's, a `vm` script's) gets a `gc` global, unless node was started with it
 * (where this context does not see the global: a test runner's sandbox).
 */
export function collectionFunction(): Collect {
  const exposed = (globalThis as { gc?: unknown }).gc;
  if (typeof exposed === 'function') return exposed as Collect;
  setFlagsFromString('--expose-gc');
  try {
    return runInNewContext('gc') as Collect;
  } finally {
    if (!process.execArgv.some((flag) => /^--expose[-_]gc$/.test(flag))) setFlagsFromString('--no-expose-gc');
  }
}

/** Hands V8's freed heap pages back to the system now (startHeapRelease), and says how long the process paused (ms). */
export type ReleaseHeapPages = () => number;

/**
 * V8 keeps the pages of its heap that a collection emptied, for reuse, and hands them back only in a
 * collection that reduces memory, which it starts of its own when the process goes idle. A server
 * under continuous load never idles, so those pages stay resident up to the highest its heap has
 * ever reached, and its RSS climbs with each new peak (docs/scaling.md, "Memory of the all-in-one").
 * Every `intervalSeconds` this runs V8's `last-resort` collection, which reduces memory: two to seven
 * full collections in a row, the compilation cache dropped (some code is compiled again after it),
 * the whole process paused (119–219 ms in the all-in-one under a soak's load). The pages are then
 * faulted in again only as the heap needs them. Each pause is counted in
 * `spanforge_heap_release_seconds`. 0 seconds: never. Returns the release, for a caller that wants
 * one at once.
 */
export function startHeapRelease(intervalSeconds: number, log: Logger, metrics: Registry, shutdown: ShutdownSequence): ReleaseHeapPages {
  // Taken at the first release: a process that never releases leaves V8's flags alone.
  let collect: Collect | undefined;
  const pauses = new Histogram({
    name: 'spanforge_heap_release_seconds',
    help: "How long the process paused to hand V8's freed heap pages back to the system (HEAP_RELEASE_SECONDS)",
    buckets: [0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5],
    registers: [metrics],
  });
  const release: ReleaseHeapPages = () => {
    const begun = performance.now();
    (collect ??= collectionFunction())({ type: 'major', execution: 'sync', flavor: 'last-resort' });
    const ms = performance.now() - begun;
    pauses.observe(ms / 1000);
    return ms;
  };
  if (intervalSeconds === 0) return release;
  log.info(`hands V8's emptied heap pages back every ${intervalSeconds} s, in a pause of the process (HEAP_RELEASE_SECONDS; 0: never)`);
  const timer = setInterval(() => {
    try {
      log.debug(`handed V8's freed heap pages back in a pause of ${release().toFixed(0)} ms`);
    } catch (error) {
      // Not expected of V8's own function; the process goes on as it would without the release.
      clearInterval(timer);
      log.error("handing V8's freed heap pages back failed: stopped (RSS may then climb to the heap's highest)", error);
    }
  }, intervalSeconds * 1000);
  // A timer of housekeeping: it never keeps the process alive.
  timer.unref();
  // Stopped first: no pause of its own delays the drain and the flush.
  shutdown.add('stop-accepting', 'heap release', async () => clearInterval(timer));
  return release;
}
