import { execFile } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { ROOT } from '../support/processes';

jest.setTimeout(120_000);

const run = promisify(execFile);

const CLIENT = path.join(ROOT, 'dist', 'libs', 'clickhouse', 'src', 'clickhouse.client.js');

/**
 * Runs `script` in a node process of its own, which opens the embedded engine as the all-in-one does
 * (createClickHouseClient, built in dist/, is its `process.argv[1]`, `args` follow): the engine takes
 * its arguments when it starts, and this test process's engine was started by the suites run before
 * this one. Returns what the script wrote to stdout, as JSON.
 */
async function inProcessOfItsOwn<T>(script: string, args: unknown[]): Promise<T> {
  if (!existsSync(CLIENT)) throw new Error(`${CLIENT} is missing: run \`npm run build\` first (npm test does)`);
  const { stdout } = await run(process.execPath, ['-e', script, CLIENT, ...args.map(String)], { cwd: ROOT });
  return JSON.parse(stdout) as T;
}

/**
 * Opens the embedded engine with a query condition cache of `cacheMiB`, in a process of its own
 * (inProcessOfItsOwn). Makes `filters` new filters (each matching nothing, with a value of its own, as a round's trace ids
 * are) over `parts` parts, and reports the engine's setting and its cache. Then runs the last filter
 * again, and the first, and reports the cache's hits (one per part whose entry it found) of each.
 * `plainFirst`: a connection without arguments starts the engine before the client is opened.
 */
async function probeEngine(options: { cacheMiB: number; parts: number; filters: number; plainFirst?: boolean }) {
  const script = `
    const { createClickHouseClient, engineSettings } = require(process.argv[1]);
    const [dir, cacheMiB, parts, filters, plainFirst] = process.argv.slice(2);
    const plain = plainFirst === 'true' ? require('chdb/connection').createChdbConnection({ path: dir }) : undefined;
    const client = createClickHouseClient({ kind: 'embedded', path: dir, conditionCacheMiB: Number(cacheMiB) });
    const rows = async (query) => (await client.query({ query, format: 'JSONEachRow' })).json();
    const filter = async (i) => Number((await rows("SELECT count() AS n FROM probe WHERE s = 'absent-" + i + "'"))[0].n);
    const figures = async () => Object.fromEntries((await rows(
      "SELECT metric, value FROM system.metrics WHERE metric IN ('QueryConditionCacheEntries', 'QueryConditionCacheBytes') " +
      "UNION ALL SELECT event AS metric, value FROM system.events WHERE event = 'QueryConditionCacheHits'",
    )).map((row) => [row.metric, Number(row.value)]));
    const hitsOf = async (i) => {
      const before = (await figures()).QueryConditionCacheHits ?? 0;
      await filter(i);
      return ((await figures()).QueryConditionCacheHits ?? 0) - before;
    };
    (async () => {
      await client.command({ query: 'CREATE TABLE probe (n UInt64, s String) ENGINE = MergeTree ORDER BY n SETTINGS index_granularity = 100' });
      await client.command({ query: 'SYSTEM STOP MERGES probe' });
      for (let part = 0; part < Number(parts); part++)
        await client.command({ query: 'INSERT INTO probe SELECT number + ' + part * 1000 + ', toString(number) FROM numbers(1000)' });
      let matched = 0;
      for (let i = 0; i < Number(filters); i++) matched += await filter(i);
      const settings = await engineSettings(client);
      const sizeBytes = settings.conditionCacheMiB * 1024 * 1024;
      const cache = await figures();
      const lastAgain = await hitsOf(Number(filters) - 1);
      const firstAgain = await hitsOf(0);
      const answer = { matched, sizeBytes, mergeNice: settings.mergeNice, entries: cache.QueryConditionCacheEntries, bytes: cache.QueryConditionCacheBytes, lastAgain, firstAgain };
      process.stdout.write(JSON.stringify(answer));
      await client.close();
      await plain?.close();
    })().catch((error) => { process.stderr.write(String(error && error.stack)); process.exit(1); });
  `;
  const dir = path.join(root, `engine-${options.cacheMiB}-${options.plainFirst ? 'plain-first' : 'client-first'}`);
  const args = [dir, options.cacheMiB, options.parts, options.filters, options.plainFirst === true];
  return inProcessOfItsOwn<{
    matched: number;
    sizeBytes: number;
    mergeNice: number;
    entries: number;
    bytes: number;
    lastAgain: number;
    firstAgain: number;
  }>(script, args);
}

/**
 * Opens the embedded engine with its merges at `mergeNice`, in a process of its own
 * (inProcessOfItsOwn), and lets its merge threads merge 4 parts of 1M rows into one, sampling each
 * merge thread's nice value and CPU time (/proc/self/task) every 2 ms. A thread's CPU time between
 * two samples counts at the nice value of the later one. Reports the engine's setting, the CPU time
 * (ticks) counted at nice 19 and at any other, and how many of the threads at nice 0 before the
 * merges were seen above it during them, or were still above it 100 ms after.
 */
async function probeMerges(mergeNice: number) {
  const script = `
    const { createClickHouseClient, engineSettings } = require(process.argv[1]);
    const { readdirSync, readFileSync } = require('node:fs');
    const [dir, mergeNice] = process.argv.slice(2);
    const mergeThreads = () => {
      const threads = new Map();
      for (const tid of readdirSync('/proc/self/task')) {
        let stat;
        try {
          stat = readFileSync('/proc/self/task/' + tid + '/stat', 'utf8');
        } catch (error) {
          if (error.code === 'ENOENT' || error.code === 'ESRCH') continue; // the thread ended since the listing
          throw error;
        }
        const name = stat.slice(stat.indexOf('(') + 1, stat.lastIndexOf(')'));
        // proc(5): after the name, utime and stime are fields 12 and 13, nice field 17 (counting the state as 1).
        const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
        if (name === 'MergeMutate') threads.set(tid, { nice: Number(fields[16]), ticks: Number(fields[11]) + Number(fields[12]) });
      }
      return threads;
    };
    const client = createClickHouseClient({ kind: 'embedded', path: dir, mergeNice: Number(mergeNice) });
    const rows = async (query) => (await client.query({ query, format: 'JSONEachRow' })).json();
    (async () => {
      const setting = (await engineSettings(client)).mergeNice;
      // Four parts this size are not worth a merge to the engine's selector until they are older
      // (which took from 1 s to over a minute): parts older than 1 s are merged regardless.
      await client.command({
        query: 'CREATE TABLE probe (n UInt64, s String) ENGINE = MergeTree ORDER BY n SETTINGS min_age_to_force_merge_seconds = 1',
      });
      await client.command({ query: 'SYSTEM STOP MERGES probe' });
      for (let part = 0; part < 4; part++)
        await client.command({ query: 'INSERT INTO probe SELECT number * 4 + ' + part + ', toString(rand()) FROM numbers(1000000)' });
      const before = mergeThreads();
      let last = before;
      const ticks = { atNice19: 0, atOtherNice: 0 };
      const raised = new Set();
      const sample = () => {
        const now = mergeThreads();
        for (const [tid, thread] of now) {
          const spent = thread.ticks - (last.get(tid)?.ticks ?? 0);
          if (thread.nice === 19) ticks.atNice19 += spent;
          else ticks.atOtherNice += spent;
          if (before.get(tid)?.nice === 0 && thread.nice > 0) raised.add(tid);
        }
        last = now;
      };
      const sampler = setInterval(sample, 2);
      await client.command({ query: 'SYSTEM START MERGES probe' });
      const deadline = Date.now() + 60_000;
      while (Number((await rows("SELECT count() AS n FROM system.parts WHERE table = 'probe' AND active"))[0].n) > 1) {
        if (Date.now() > deadline) throw new Error('the merges did not bring the 4 parts to 1 within 60 s');
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
      clearInterval(sampler);
      sample();
      await new Promise((resolve) => setTimeout(resolve, 100));
      const stillRaised = [...mergeThreads()].filter(([tid, thread]) => before.get(tid)?.nice === 0 && thread.nice > 0).length;
      process.stdout.write(JSON.stringify({ setting, ...ticks, raisedFromZero: raised.size, stillRaised }));
      await client.close();
    })().catch((error) => { process.stderr.write(String(error && error.stack)); process.exit(1); });
  `;
  return inProcessOfItsOwn<{ setting: number; atNice19: number; atOtherNice: number; raisedFromZero: number; stillRaised: number }>(
    script,
    [path.join(root, `merges-at-nice-${mergeNice}`), mergeNice],
  );
}

let root: string;
beforeAll(() => {
  root = mkdtempSync(path.join(os.tmpdir(), 'spanforge-engine-settings-'));
});
afterAll(() => rmSync(root, { recursive: true, force: true }));

/** The embedded engine's query condition cache is capped at CLICKHOUSE_CONDITION_CACHE_MIB (libs/clickhouse/src/clickhouse.client.ts). */
describe("the embedded engine's query condition cache", () => {
  it('stays within its size when new filters would leave more, keeping the newest entries', async () => {
    const parts = 40;
    const filters = 600;
    const probe = await probeEngine({ cacheMiB: 1, parts, filters });
    expect(probe.matched).toBe(0);
    expect(probe.sizeBytes).toBe(1024 * 1024);
    expect(probe.bytes).toBeGreaterThan(0);
    expect(probe.bytes).toBeLessThanOrEqual(1024 * 1024);
    // Each filter left an entry per part; the oldest went once the cap was reached, the newest stayed.
    expect(probe.entries).toBeGreaterThan(0);
    expect(probe.entries).toBeLessThan(parts * filters);
    expect(probe.lastAgain).toBe(parts);
    expect(probe.firstAgain).toBe(0);
  });

  it('keeps an entry per part for each new filter while under its size', async () => {
    const parts = 5;
    const filters = 20;
    const probe = await probeEngine({ cacheMiB: 2, parts, filters });
    expect(probe.sizeBytes).toBe(2 * 1024 * 1024);
    // Not told otherwise, the client starts the engine with its merges at the shared lane's priority.
    expect(probe.mergeNice).toBe(19);
    expect(probe.entries).toBe(parts * filters);
    expect(probe.lastAgain).toBe(parts);
    expect(probe.firstAgain).toBe(parts);
  });

  it('is the one the engine started with when another connection started it first (whose arguments were none)', async () => {
    const probe = await probeEngine({ cacheMiB: 1, parts: 1, filters: 1, plainFirst: true });
    // The engine's own defaults, 100 MiB and nice 0: the client's arguments came too late, and did not fail it.
    expect(probe.sizeBytes).toBe(100 * 1024 * 1024);
    expect(probe.mergeNice).toBe(0);
    expect(probe.entries).toBe(1);
  });
});

/**
 * The embedded engine's merges run at CLICKHOUSE_MERGE_NICE (libs/clickhouse/src/clickhouse.client.ts,
 * embeddedEngineArguments). A thread a statement's thread started while at the shared lane's
 * priority keeps nice 19 from it, whatever it runs later; so these count what the threads at 0
 * became, and the CPU time at each nice value.
 */
describe("the embedded engine's merges", () => {
  it('run at nice 19 when told, and their threads go back to 0 after', async () => {
    const probe = await probeMerges(19);
    expect(probe.setting).toBe(19);
    const merging = probe.atNice19 + probe.atOtherNice;
    expect(merging).toBeGreaterThan(0);
    // A merge's thread takes the value as it starts a merge's step and goes back to 0 as it ends
    // one: the 2 ms samples count some of its time at 0.
    expect(probe.atNice19 / merging).toBeGreaterThanOrEqual(0.75);
    expect(probe.stillRaised).toBe(0);
  });

  it("run at the engine's priority with 0, as ClickHouse's default", async () => {
    const probe = await probeMerges(0);
    expect(probe.setting).toBe(0);
    expect(probe.atNice19 + probe.atOtherNice).toBeGreaterThan(0);
    expect(probe.raisedFromZero).toBe(0);
  });
});
