import { readFileSync } from 'node:fs';
import path from 'node:path';
import { builtLib, inProcessOfItsOwn, temporaryRootForFile } from '../support/engine-process';

jest.setTimeout(120_000);

const root = temporaryRootForFile('spanforge-engine-settings-');

/**
 * Runs `script` in a process of its own (inProcessOfItsOwn) that opens the embedded engine as the
 * all-in-one does: createClickHouseClient, built in dist/, is its `process.argv[1]`, `args` follow.
 * Returns what the script wrote to stdout, as JSON, and its log (stderr).
 */
async function withEngine<T>(script: string, args: unknown[]): Promise<{ answer: T; log: string }> {
  const { stdout, stderr } = await inProcessOfItsOwn(script, [builtLib('clickhouse', 'src', 'clickhouse.client.js'), ...args]);
  return { answer: JSON.parse(stdout) as T, log: stderr };
}

/**
 * Opens the embedded engine with a query condition cache of `cacheMiB`, in a process of its own
 * (withEngine). Makes `filters` new filters (each matching nothing, with a value of its own, as a round's trace ids
 * are) over `parts` parts, and reports the engine's setting and its cache. Then runs the last filter
 * again, and the first, and reports the cache's hits (one per part whose entry it found) of each.
 * Its log is what the all-in-one's start-up says of the engine's settings (checkEngineSettings),
 * configured with `cacheMiB` and merges at nice 19.
 * `plainFirst`: a connection without arguments starts the engine before the client is opened.
 */
async function probeEngine(options: { cacheMiB: number; parts: number; filters: number; plainFirst?: boolean }) {
  const script = `
    const { createClickHouseClient, engineSettings } = require(process.argv[1]);
    const [modulePath, loggerPath, dir, cacheMiB, parts, filters, plainFirst] = process.argv.slice(2);
    const { checkEngineSettings } = require(modulePath);
    const { Logger } = require(loggerPath);
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
      await checkEngineSettings(client, { conditionCacheMiB: Number(cacheMiB), mergeNice: 19 }, new Logger('info').child('clickhouse'));
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
  const dir = path.join(root(), `engine-${options.cacheMiB}-${options.plainFirst ? 'plain-first' : 'client-first'}`);
  const modules = [builtLib('runtime', 'src', 'modules', 'clickhouse.module.js'), builtLib('runtime', 'src', 'logger.js')];
  const args = [...modules, dir, options.cacheMiB, options.parts, options.filters, options.plainFirst === true];
  return withEngine<{
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
 * (withEngine), and lets its merge threads merge 3 tables of 4 parts (400,000 rows each)
 * into a part each, sampling each merge thread's nice value and CPU time (/proc/self/task) every
 * 2 ms. Reports the engine's setting; the merge threads' CPU time (ticks) at nice 19 and at 0,
 * counting only the intervals whose two samples agree on the nice value; and, of the threads at 0
 * before the merges, how many were seen above 0 during them and how many were still above it
 * 100 ms after. (A thread starts with the nice value of the thread that started it: a merge thread
 * may be at 19 before any merge, started by a statement's thread at the shared lane's priority.)
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
    const tables = ['probe_a', 'probe_b', 'probe_c'];
    (async () => {
      const setting = (await engineSettings(client)).mergeNice;
      for (const table of tables) {
        // Four parts this size are not worth a merge to the engine's selector until they are older
        // (which took from 1 s to over a minute): parts older than 1 s are merged regardless.
        await client.command({
          query: 'CREATE TABLE ' + table + ' (n UInt64, s String) ENGINE = MergeTree ORDER BY n SETTINGS min_age_to_force_merge_seconds = 1',
        });
        await client.command({ query: 'SYSTEM STOP MERGES ' + table });
        for (let part = 0; part < 4; part++)
          await client.command({ query: 'INSERT INTO ' + table + ' SELECT number * 4 + ' + part + ', toString(rand()) FROM numbers(400000)' });
      }
      const atZero = new Set([...mergeThreads()].filter(([, thread]) => thread.nice === 0).map(([tid]) => tid));
      let last = mergeThreads();
      const ticks = { atNice19: 0, atNice0: 0 };
      const raised = new Set();
      const sample = () => {
        const now = mergeThreads();
        for (const [tid, thread] of now) {
          if (atZero.has(tid) && thread.nice > 0) raised.add(tid);
          const before = last.get(tid);
          if (before === undefined || before.nice !== thread.nice) continue;
          if (thread.nice === 19) ticks.atNice19 += thread.ticks - before.ticks;
          else if (thread.nice === 0) ticks.atNice0 += thread.ticks - before.ticks;
        }
        last = now;
      };
      const sampler = setInterval(sample, 2);
      for (const table of tables) await client.command({ query: 'SYSTEM START MERGES ' + table });
      const deadline = Date.now() + 60_000;
      const unmerged = "SELECT count() AS n FROM system.parts WHERE table IN ('probe_a', 'probe_b', 'probe_c') AND active";
      while (Number((await rows(unmerged))[0].n) > tables.length) {
        if (Date.now() > deadline) throw new Error('the merges did not bring each table to one part within 60 s');
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
      clearInterval(sampler);
      sample();
      await new Promise((resolve) => setTimeout(resolve, 100));
      const stillRaised = [...mergeThreads()].filter(([tid, thread]) => atZero.has(tid) && thread.nice > 0).length;
      process.stdout.write(JSON.stringify({ setting, atZeroBefore: atZero.size, ...ticks, raisedFromZero: raised.size, stillRaised }));
      await client.close();
    })().catch((error) => { process.stderr.write(String(error && error.stack)); process.exit(1); });
  `;
  return withEngine<{
    setting: number;
    atZeroBefore: number;
    atNice19: number;
    atNice0: number;
    raisedFromZero: number;
    stillRaised: number;
  }>(script, [path.join(root(), `merges-at-nice-${mergeNice}`), mergeNice]);
}

/**
 * Whether this process may lower a thread's nice value (CAP_SYS_NICE, bit 23 of its effective
 * capabilities): the engine sets the merges' nice value only with it, as it does the statements'.
 */
function maySetNice(): boolean {
  const effective = /^CapEff:\s*([0-9a-f]+)$/m.exec(readFileSync('/proc/self/status', 'utf8'));
  return effective !== null && (BigInt(`0x${effective[1]}`) & (1n << 23n)) !== 0n;
}

/** The embedded engine's query condition cache is capped at CLICKHOUSE_CONDITION_CACHE_MIB (libs/clickhouse/src/clickhouse.client.ts). */
describe("the embedded engine's query condition cache", () => {
  it('stays within its size when new filters would leave more, keeping the newest entries', async () => {
    const parts = 40;
    const filters = 600;
    const { answer: probe } = await probeEngine({ cacheMiB: 1, parts, filters });
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
    const { answer: probe, log } = await probeEngine({ cacheMiB: 2, parts, filters });
    expect(probe.sizeBytes).toBe(2 * 1024 * 1024);
    // Not told otherwise, the client starts the engine with its merges at the shared lane's priority.
    expect(probe.mergeNice).toBe(19);
    expect(log).toContain('INFO  [clickhouse] embedded engine: query condition cache of 2 MiB (CLICKHOUSE_CONDITION_CACHE_MIB)');
    expect(log).toContain('INFO  [clickhouse] embedded engine: merges at nice 19 (CLICKHOUSE_MERGE_NICE)');
    expect(log).not.toContain('WARN');
    expect(probe.entries).toBe(parts * filters);
    expect(probe.lastAgain).toBe(parts);
    expect(probe.firstAgain).toBe(parts);
  });

  it('is the one the engine started with when another connection started it first (whose arguments were none)', async () => {
    const { answer: probe, log } = await probeEngine({ cacheMiB: 1, parts: 1, filters: 1, plainFirst: true });
    // The engine's own defaults, 100 MiB and nice 0: the client's arguments came too late, and did not fail it.
    expect(probe.sizeBytes).toBe(100 * 1024 * 1024);
    expect(probe.mergeNice).toBe(0);
    expect(probe.entries).toBe(1);
    // The start-up says so, setting by setting.
    expect(log).toContain(
      'WARN  [clickhouse] embedded engine: query condition cache of 100 MiB, not the 1 MiB of CLICKHOUSE_CONDITION_CACHE_MIB: ' +
        'something else in this process opened the engine first, without it',
    );
    expect(log).toContain(
      'WARN  [clickhouse] embedded engine: merges at nice 0, not the 19 of CLICKHOUSE_MERGE_NICE: ' +
        'something else in this process opened the engine first, without it',
    );
  });
});

/**
 * The embedded engine's merges run at CLICKHOUSE_MERGE_NICE (libs/clickhouse/src/clickhouse.client.ts,
 * embeddedEngineArguments). Without CAP_SYS_NICE the engine sets no thread's nice value (root has it; a container does not
 * by default), and these do not run.
 */
const withNice = maySetNice() ? describe : describe.skip;
withNice("the embedded engine's merges", () => {
  it('run at nice 19 when told, and their threads go back to 0 after', async () => {
    const { answer: probe } = await probeMerges(19);
    expect(probe.setting).toBe(19);
    const merging = probe.atNice19 + probe.atNice0;
    expect(merging).toBeGreaterThan(0);
    // A thread is at 19 from the start of a merge's step to its end, at 0 between steps: an interval
    // of 2 ms that begins and ends at 0 may hold the end of one step and the start of the next.
    expect(probe.atNice19 / merging).toBeGreaterThanOrEqual(0.75);
    expect(probe.stillRaised).toBe(0);
  });

  it("leave their threads' nice values alone with 0, ClickHouse's default", async () => {
    const { answer: probe } = await probeMerges(0);
    expect(probe.setting).toBe(0);
    expect(probe.atNice19 + probe.atNice0).toBeGreaterThan(0);
    // Those at 19 before (started at a statement's priority) may merge at 19; none at 0 is raised.
    expect(probe.raisedFromZero).toBe(0);
  });
});
