import { createClient, type ClickHouseClient } from '@clickhouse/client';
import { DEFAULT_CONDITION_CACHE_MIB, DEFAULT_MERGE_NICE, setEngineAllocatorOptions } from '@spanforge/config';
import { reasonOf, stderrLog } from '@spanforge/postgres';
import { mkdirSync } from 'node:fs';
import path from 'node:path';
import { currentLane } from './fair-scheduler';
import { withInlinedParameters } from './inline-parameters';
import { InsertRowsFiles, readingRowsFrom, rowsCanBeInFile, withoutFileName } from './insert-rows-file';
import { namedStatement } from './statements';

export type { ClickHouseClient } from '@clickhouse/client';

export type ClickHouseTarget =
  | ({
      kind: 'server';
      url: string;
      username: string;
      password: string;
      database: string;
    } & ClusterOrNot)
  /**
   * chDB in-process; it binds one data directory per process and always uses database `default`.
   * `conditionCacheMiB` and `mergeNice`: the engine's server settings (embeddedEngineArguments;
   * DEFAULT_CONDITION_CACHE_MIB and DEFAULT_MERGE_NICE unless given).
   */
  | ({ kind: 'embedded'; path: string } & Partial<EngineSettings>);

/** One server, or a cluster with how far two of its servers' clocks may differ (clock-bound.ts). */
export type ClusterOrNot = { cluster?: undefined; maxClockOffsetMs?: undefined } | { cluster: string; maxClockOffsetMs: number };

export function clickHouseTarget(config: {
  dataDir: string;
  clickhouse?: { url: string; username: string; password: string; database: string } & ClusterOrNot;
  clickhouseConditionCacheMiB: number;
  clickhouseMergeNice: number;
}): ClickHouseTarget {
  if (config.clickhouse) return { kind: 'server', ...config.clickhouse };
  return {
    kind: 'embedded',
    path: path.join(config.dataDir, 'clickhouse'),
    conditionCacheMiB: config.clickhouseConditionCacheMiB,
    mergeNice: config.clickhouseMergeNice,
  };
}

/**
 * Every statement's settings on a cluster in the schema's cluster form, where several workers keep
 * the same figures up and "the newest computation wins" (docs/scaling.md, "Several workers on a
 * cluster"): a computation must see every row whose insert returned before it started.
 * - `insert_distributed_sync`: an insert into a Distributed table returns once the rows are in
 *   their shards' tables (by default it returns once they are queued on the server that took it,
 *   and the round's recomputation right after would read without them). The old name of
 *   `distributed_foreground_insert`, which servers of every supported version take.
 * - `insert_quorum = 'auto'`: it returns once a majority of each shard's replicas hold them, so an
 *   acknowledged row survives the loss of a replica.
 * - `load_balancing = 'first_or_random'`: every process writes to and reads from the first healthy
 *   replica of each shard, which holds its own inserts from the moment they return.
 */
export const CLUSTER_STATEMENT_SETTINGS = Object.freeze({
  insert_distributed_sync: 1,
  insert_quorum: 'auto',
  load_balancing: 'first_or_random',
} as const);

/** How the client of a ClickHouse server is made (the cluster's settings on every statement when there is one). */
export function serverClientOptions(
  target: Extract<ClickHouseTarget, { kind: 'server' }>,
): NonNullable<Parameters<typeof createClient>[0]> {
  return {
    url: target.url,
    username: target.username,
    password: target.password,
    database: target.database,
    application: 'spanforge',
    request_timeout: 60_000,
    compression: { request: true, response: true },
    ...(target.cluster ? { clickhouse_settings: { ...CLUSTER_STATEMENT_SETTINGS } } : {}),
  };
}

/**
 * chDB, loaded lazily: the ~560 MB libchdb is only mapped when embedded mode is chosen. It comes
 * as an optional dependency per platform, and npm skips an optional dependency it failed to fetch
 * with only a warning, so a missing one is explained with what to do.
 *
 * Just before, the engine's allocator gets its options (setEngineAllocatorOptions).
 */
function loadChdb(): Pick<typeof import('chdb/connection'), 'createChdbConnection'> & Pick<typeof import('chdb'), 'Session'> {
  setEngineAllocatorOptions();
  try {
    /* eslint-disable @typescript-eslint/no-require-imports */
    const { createChdbConnection } = require('chdb/connection') as typeof import('chdb/connection');
    const { Session } = require('chdb') as typeof import('chdb');
    /* eslint-enable @typescript-eslint/no-require-imports */
    return { createChdbConnection, Session };
  } catch (error) {
    const reason = (error as Error).message;
    if (!/no native binding/i.test(reason)) throw error;
    throw new Error(
      `${reason}. npm installs the embedded ClickHouse (libchdb) as an optional dependency and skips it without failing when ` +
        'its download fails: run `npm ci` again, or set CLICKHOUSE_URL to use a ClickHouse server instead.',
      { cause: error },
    );
  }
}

/** Same `ClickHouseClient` either way, same SQL and binding; only the connection differs (HTTP to a server, or chDB in-process). */
export function createClickHouseClient(target: ClickHouseTarget): ClickHouseClient {
  if (target.kind === 'server') return createClient(serverClientOptions(target));
  // Every span of every tenant lives here: readable by this process's user only (chDB would create it with the umask's mode).
  mkdirSync(target.path, { recursive: true, mode: 0o700 });
  const { createChdbConnection, Session } = loadChdb();
  // chdb types its Connection against @clickhouse/client-common, the client against its own copy of the same interface.
  type ClientConnection = NonNullable<NonNullable<Parameters<typeof createClient>[0]>['connection']>;
  let rowsFiles: InsertRowsFiles;
  const session = () => embeddedCalls(createChdbConnection({ path: target.path }) as unknown as ClientConnection, rowsFiles);
  // The engine starts with the first connection to its directory, and takes its arguments from that
  // one only: chdb/connection passes none, so a Session that does is opened first and closed once
  // the client's connections hold the engine. (A client opened while another still holds the same
  // directory in this process gets the engine as that one started it.)
  const starter = new Session(target.path, {
    connectionArgs: embeddedEngineArguments({
      conditionCacheMiB: target.conditionCacheMiB ?? DEFAULT_CONDITION_CACHE_MIB,
      mergeNice: target.mergeNice ?? DEFAULT_MERGE_NICE,
    }),
  });
  try {
    // Once the engine holds the directory (InsertRowsFiles empties what an earlier process left).
    rowsFiles = new InsertRowsFiles(path.join(target.path, 'insert-rows'));
    const shared = session();
    let express: ClientConnection;
    try {
      express = session();
    } catch (error) {
      // The first would hold the engine (and its directory) open.
      shared
        .close()
        .catch((closeError: unknown) =>
          stderrLog('clickhouse').warn(`closing the engine's first connection after the second failed to open: ${reasonOf(closeError)}`),
        );
      throw error;
    }
    return createClient({ connection: byLane(withSessionSet(shared, SHARED_LANE_SET), express) });
  } finally {
    starter.close();
  }
}

/** The embedded engine's server settings this project sets (embeddedEngineArguments). */
export interface EngineSettings {
  conditionCacheMiB: number;
  mergeNice: number;
}

/**
 * The embedded engine's server settings, given when it starts (a ClickHouse server has them in its
 * configuration).
 *
 * `query_condition_cache_size` (bytes): the cache remembers, per part and per filter, which
 * granules the filter matched nothing in; it is what makes the upkeep's second and third lookups of
 * a round's trace ids cheap. But nearly every statement's filter is new (a round's trace ids and
 * times, a dashboard's range) and leaves an entry per part it read that no later statement asks for,
 * and the engine evicts only once the entries' counted size reaches the cap: 100 MiB by default,
 * which under continuous load takes 15 hours to a day to reach, and the entries hold about three
 * times what they count (docs/scaling.md, "Memory of the all-in-one"). Eviction is segmented LRU:
 * an entry asked for again (a round's later lookups) moves to the protected half, and the
 * others go oldest first. A round needs its own few hundred entries; a few MiB keep many minutes'.
 *
 * `os_threads_nice_value_merge_mutate`: the nice value a merge (or mutation) thread takes while it
 * runs one, back to 0 after. The engine's default, 0, puts the merges above the shared lane's
 * statements, which run at the lowest priority (SHARED_LANE_SET, below): a large merge then takes
 * the cores from the worker's inserts and upkeep first, though the merges exist only to keep up
 * with what those write. At 19 the two compete for the cores on equal terms, and the express lane
 * and the process's JavaScript (gateway, API) keep their priority over both. Applied, as the lane's
 * priority is, only with CAP_SYS_NICE (docs/scaling.md, "The merges' priority").
 */
export function embeddedEngineArguments(settings: EngineSettings): string[] {
  const { conditionCacheMiB, mergeNice } = settings;
  if (!Number.isInteger(conditionCacheMiB) || conditionCacheMiB < 0) {
    throw new RangeError(`the query condition cache's size must be a whole number of MiB, 0 or more (got ${conditionCacheMiB})`);
  }
  if (!Number.isInteger(mergeNice) || mergeNice < 0 || mergeNice > 19) {
    throw new RangeError(`the merges' nice value must be a whole number from 0 to 19 (got ${mergeNice})`);
  }
  return [`--query_condition_cache_size=${conditionCacheMiB * 1024 * 1024}`, `--os_threads_nice_value_merge_mutate=${mergeNice}`];
}

/**
 * The server settings the engine started with (EngineSettings), which are those of the first
 * client opened on its directory in this process (createClickHouseClient).
 */
export async function engineSettings(clickhouse: ClickHouseClient): Promise<EngineSettings> {
  const result = await clickhouse.query({
    query:
      'SELECT name, value FROM system.server_settings ' +
      "WHERE name IN ('query_condition_cache_size', 'os_threads_nice_value_merge_mutate')",
    format: 'JSONEachRow',
    ...namedStatement('engine.server_settings'),
  });
  const values = new Map((await result.json<{ name: string; value: string }>()).map((row) => [row.name, Number(row.value)]));
  const valueOf = (name: string) => {
    const value = values.get(name);
    if (value === undefined) throw new Error(`system.server_settings has no ${name}`);
    return value;
  };
  return {
    conditionCacheMiB: valueOf('query_condition_cache_size') / (1024 * 1024),
    mergeNice: valueOf('os_threads_nice_value_merge_mutate'),
  };
}

/**
 * The embedded engine's sessions (docs/architecture.md, "Fairness between projects"). The shared
 * lane's statements (the worker's inserts and upkeep, every project's statements in turn, and
 * whatever runs outside the turns) run at the lowest CPU priority, so that a short statement of
 * the express lane beside one gets the cores it needs; alone, a statement runs as fast either way.
 * ClickHouse applies a priority only with the CAP_SYS_NICE capability, and runs without one
 * otherwise (the lanes then share the cores evenly).
 */
const SHARED_LANE_SET = 'SET os_thread_priority = 19';

/**
 * A session whose first statement is preceded by `set` (a SET statement), which then holds for
 * every statement of it (chDB keeps a session's settings). A SET that failed fails the call that
 * needed it, with its reason (a ping, so readiness says it), and is tried again by the next call.
 */
function withSessionSet<C extends ConnectionMethods>(connection: C, set: string): C {
  let setUp: Promise<unknown> | undefined;
  const ready = () => {
    setUp ??= connection.command({ query: set }).catch((error: unknown) => {
      setUp = undefined;
      throw error;
    });
    return setUp;
  };
  const prepared: ConnectionMethods = {
    ...statements(async (method, params) => (await ready(), connection[method](params))),
    ping: async (params) => (await ready(), connection.ping(params)),
    close: () => connection.close(),
  };
  return prepared as C;
}

/**
 * Two sessions of the one embedded engine, each running one statement at a time: statements go to
 * the express session when FairScheduler runs them in its express lane (a dashboard's short read
 * beside a long insert), to the main one otherwise. Both see the same tables.
 */
function byLane<C extends ConnectionMethods>(main: C, express: C): C {
  const pick = () => (currentLane() === 'express' ? express : main);
  const routed: ConnectionMethods = {
    ...statements((method, params) => pick()[method](params)),
    ping: (params) => main.ping(params),
    close: async () => void (await Promise.all([main.close(), express.close()])),
  };
  return routed as C;
}

/**
 * The calls of a chDB session:
 * - chDB turns a call's `clickhouse_settings` into SET statements on the connection's session, so
 *   they would outlive the call and apply to every later statement (one query's limits to the
 *   worker's upkeep). Embedded calls therefore take no settings: `log_comment` is dropped (chDB
 *   keeps no query log) and anything else is refused; a statement that needs a setting says so in
 *   its own SETTINGS clause, which works on a ClickHouse server too.
 * - a call's bound parameters are written into its query as typed literals where each is checked
 *   (inline-parameters.ts): chDB runs statements with bound parameters one at a time in the
 *   process, whatever their session, and these then run beside each other in the two lanes.
 * - an insert's rows, from ROWS_IN_FILE_FROM_CHARS characters on, go to the engine in a file it
 *   reads (InsertRowsFiles), so that their parsing runs at the session's priority.
 */
function embeddedCalls<C extends ConnectionMethods>(connection: C, rowsFiles: InsertRowsFiles): C {
  const strip = <P extends { clickhouse_settings?: Record<string, unknown> }>(params: P): P => {
    const settings = params.clickhouse_settings;
    if (!settings) return params;
    const others = Object.keys(settings).filter((name) => name !== 'log_comment' && settings[name] !== undefined);
    if (others.length > 0) {
      throw new Error(
        `embedded ClickHouse takes no per-call settings (${others.join(', ')}): chDB would keep them for every later statement; put them in the statement's SETTINGS clause`,
      );
    }
    return { ...params, clickhouse_settings: undefined };
  };
  const prepare = <P extends object>(params: P): P =>
    withInlinedParameters(strip(params as P & { query: string; clickhouse_settings?: Record<string, unknown> }));
  /** An insert whose rows come with the call (exec's or insert's `values`): from a file when they are many. */
  const withRows = async (method: 'exec' | 'insert', params: { query: string; values?: unknown }) => {
    const { values, ...statement } = params;
    if (values === undefined || !rowsCanBeInFile(params.query)) return connection[method](params);
    const rows = await rowsFiles.rowsOf(values);
    if ('text' in rows) return connection[method]({ ...params, values: rows.text });
    try {
      const query = readingRowsFrom(params.query, rows.file);
      if (method === 'exec') return await connection.exec({ ...statement, query });
      // Without rows to send, an insert is a statement like any other; its summary counts what it read as written, as chDB's insert does.
      const result = (await connection.command({ ...statement, query })) as { summary?: Record<string, string> };
      return result.summary
        ? { ...result, summary: { ...result.summary, written_rows: result.summary.read_rows, written_bytes: result.summary.read_bytes } }
        : result;
    } catch (error) {
      throw withoutFileName(error, rows.file);
    } finally {
      await rowsFiles.remove(rows.file);
    }
  };
  const scoped: ConnectionMethods = {
    ...statements((method, params) =>
      // An insert's rows are data, not parameters: only its settings are checked.
      method === 'insert'
        ? withRows(method, strip(params as { query: string; clickhouse_settings?: Record<string, unknown> }))
        : method === 'exec'
          ? withRows(method, prepare(params as { query: string }))
          : connection[method](prepare(params)),
    ),
    ping: (params) => connection.ping(params),
    close: () => connection.close(),
  };
  return scoped as C;
}

/** The methods of @clickhouse/client's Connection, loosely typed (chdb and the client type it against different copies). */
interface ConnectionMethods {
  query(params: object): Promise<unknown>;
  exec(params: object): Promise<unknown>;
  command(params: object): Promise<unknown>;
  insert(params: object): Promise<unknown>;
  ping(params: object): Promise<unknown>;
  close(): Promise<void>;
}

/** The methods of a Connection that run a statement. */
type StatementMethod = 'query' | 'exec' | 'command' | 'insert';

/** A connection's statement methods, each handing its name and parameters to `run`. */
function statements(run: (method: StatementMethod, params: object) => Promise<unknown>): Pick<ConnectionMethods, StatementMethod> {
  return {
    query: (params) => run('query', params),
    exec: (params) => run('exec', params),
    command: (params) => run('command', params),
    insert: (params) => run('insert', params),
  };
}

export function describeTarget(target: ClickHouseTarget): string {
  if (target.kind === 'embedded') return `embedded chDB at ${target.path}`;
  const url = new URL(target.url);
  const cluster = target.cluster ? ` (cluster ${target.cluster}: quorum inserts, first healthy replica)` : '';
  return `ClickHouse server ${url.protocol}//${url.host} database ${target.database}${cluster}`;
}
