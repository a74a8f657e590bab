import { readFileSync } from 'node:fs';
import path from 'node:path';
import { builtLib, builtModule, inProcessOfItsOwn, temporaryRootForFile } from '../support/engine-process';

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
 * Script text defining `threads(keep)`: this process's live threads (ownThreadTicks, bench/cpu.ts)
 * whose names `keep` takes, by thread id, each with its name, CPU time in clock ticks and nice value.
 */
function threadsScript(): string {
  return `
    const { ownThreadTicks } = require(${JSON.stringify(builtModule('bench', 'cpu.js'))});
    const threads = (keep) => new Map([...ownThreadTicks().threads].filter(([, thread]) => keep(thread.name)));
  `;
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
    ${threadsScript()}
    const [dir, mergeNice] = process.argv.slice(2);
    const mergeThreads = () => threads((name) => name === 'MergeMutate');
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
 * Opens the embedded engine in a process of its own (withEngine) and inserts 8 exports' rows of
 * about 10 MB each into a table on the shared lane (nice 19), twice: with the rows in the
 * statement's text (a SETTINGS clause keeps them there: rowsCanBeInFile), and with the rows written
 * to files first (InsertRowsFiles, as the client does) and then read by the statements
 * (`FROM INFILE`). Samples the engine's threads every 2 ms during the statements, and reports per
 * way their CPU time (ticks) at nice 19 and at 0, counting only the intervals whose two samples
 * agree, with the names of the threads at 0.
 */
async function probeInserts() {
  const script = `
    const { createClickHouseClient } = require(process.argv[1]);
    ${threadsScript()}
    const [statementsPath, rowsFilePath, dir] = process.argv.slice(2);
    const { insertLines } = require(statementsPath);
    const { InsertRowsFiles, readingRowsFrom } = require(rowsFilePath);
    // Every thread but Node's JavaScript (which samples too), V8's, and the merges' (at their own setting).
    const engineThreads = () => threads((name) => !(name === 'MainThread' || name.startsWith('V8') || name.startsWith('MergeMutate')));
    const client = createClickHouseClient({ kind: 'embedded', path: dir });
    const exportsOf = (variant) => Array.from({ length: 8 }, (_, e) =>
      Array.from({ length: 100000 }, (_, i) => JSON.stringify({ n: e * 100000 + i, s: variant + ' row ' + i + ' ' + 'x'.repeat(60 + (i % 40)) }) + '\\n').join(''));
    // The engine's threads' CPU time while \`inserts\` run.
    const measure = async (inserts) => {
      let last = engineThreads();
      const ticks = { atNice19: 0, atNice0: 0, atNice0ByName: {} };
      const sample = () => {
        const now = engineThreads();
        for (const [tid, thread] of now) {
          const before = last.get(tid);
          if (before === undefined || before.nice !== thread.nice) continue;
          const spent = thread.ticks - before.ticks;
          if (thread.nice === 19) ticks.atNice19 += spent;
          else if (thread.nice === 0 && spent > 0) {
            ticks.atNice0 += spent;
            ticks.atNice0ByName[thread.name] = (ticks.atNice0ByName[thread.name] || 0) + spent;
          }
        }
        last = now;
      };
      const sampler = setInterval(sample, 2);
      await inserts();
      clearInterval(sampler);
      sample();
      return ticks;
    };
    (async () => {
      await client.command({ query: 'CREATE TABLE probe_rows (n UInt64, s String) ENGINE = MergeTree ORDER BY n' });
      const inTextRows = exportsOf('text');
      const inText = await measure(async () => {
        for (const text of inTextRows) await insertLines(client, "INSERT INTO probe_rows SETTINGS log_comment = 'rows in the text' FORMAT JSONEachRow", [text], 'test.insert_probe');
      });
      // The files written first, as the client writes them, so that what is sampled is the statements.
      const files = new InsertRowsFiles(dir + '-rows');
      const written = [];
      for (const text of exportsOf('file')) written.push((await files.rowsOf(text)).file);
      const inFile = await measure(async () => {
        for (const file of written) await client.command({ query: readingRowsFrom('INSERT INTO probe_rows FORMAT JSONEachRow', file) });
      });
      for (const file of written) await files.remove(file);
      const stored = (await (await client.query({ query: 'SELECT count() AS n FROM probe_rows', format: 'JSONEachRow' })).json())[0].n;
      process.stdout.write(JSON.stringify({ inText, inFile, stored: Number(stored) }));
      await client.close();
    })().catch((error) => { process.stderr.write(String(error && error.stack)); process.exit(1); });
  `;
  type Ticks = { atNice19: number; atNice0: number; atNice0ByName: Record<string, number> };
  return withEngine<{ inText: Ticks; inFile: Ticks; stored: number }>(script, [
    builtLib('clickhouse', 'src', 'statements.js'),
    builtLib('clickhouse', 'src', 'insert-rows-file.js'),
    path.join(root(), 'inserts'),
  ]);
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

/**
 * The shared lane's statements run at nice 19 (libs/clickhouse/src/clickhouse.client.ts,
 * SHARED_LANE_SET). An insert's rows in its text are read on the calling thread before the
 * statement's priority applies; from a file (InsertRowsFiles) the engine's own threads read them.
 * The file's write, on Node's pool at 0, is not sampled here.
 */
withNice("the embedded engine's inserts on the shared lane", () => {
  it('run at nice 19 reading their rows from a file, where the rows in the text have the calling thread read them at 0', async () => {
    const { answer: probe } = await probeInserts();
    expect(probe.stored).toBe(2 * 8 * 100_000);
    const share0 = (ticks: { atNice19: number; atNice0: number }) => ticks.atNice0 / (ticks.atNice19 + ticks.atNice0);
    // In the text, the calling thread (`libuv-worker`) reads the rows at 0 before the statement's
    // priority applies: about half of these inserts' time (0.50–0.60 in five runs).
    expect(share0(probe.inText)).toBeGreaterThanOrEqual(0.3);
    // From a file the statement's text is a line, and the engine reads the rows at its priority
    // (none of the statements' time at 0 in the same five runs).
    // (On failure, the share and the threads at 0 are what it shows.)
    const inFile = { share: share0(probe.inFile), atNice0ByName: probe.inFile.atNice0ByName };
    expect(inFile.share <= 0.1 ? 'at most a tenth at 0' : JSON.stringify(inFile)).toBe('at most a tenth at 0');
  });
});
