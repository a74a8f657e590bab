import { createClient, type ClickHouseClient } from '@clickhouse/client';
import { mkdirSync } from 'node:fs';
import path from 'node:path';

export type { ClickHouseClient } from '@clickhouse/client';

export type ClickHouseTarget =
  | { kind: 'server'; url: string; username: string; password: string; database: string }
  /** chDB in-process; it binds one data directory per process and always uses database `default`. */
  | { kind: 'embedded'; path: string };

export function clickHouseTarget(config: {
  dataDir: string;
  clickhouse?: { url: string; username: string; password: string; database: string };
}): ClickHouseTarget {
  return config.clickhouse ? { kind: 'server', ...config.clickhouse } : { kind: 'embedded', path: path.join(config.dataDir, 'clickhouse') };
}

/** Same `ClickHouseClient` either way, same SQL and binding; only the connection differs (HTTP to a server, or chDB in-process). */
export function createClickHouseClient(target: ClickHouseTarget): ClickHouseClient {
  if (target.kind === 'server') {
    return createClient({
      url: target.url,
      username: target.username,
      password: target.password,
      database: target.database,
      application: 'spanforge',
      request_timeout: 60_000,
      compression: { request: true, response: true },
    });
  }
  // Every span of every tenant lives here: readable by this process's user only (chDB would create it with the umask's mode).
  mkdirSync(target.path, { recursive: true, mode: 0o700 });
  // Loaded lazily: the ~560 MB libchdb is only mapped when embedded mode is chosen.
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  const { createChdbConnection } = require('chdb/connection') as typeof import('chdb/connection');
  // chdb types its Connection against @clickhouse/client-common, the client against its own copy of the same interface.
  type ClientConnection = NonNullable<NonNullable<Parameters<typeof createClient>[0]>['connection']>;
  return createClient({ connection: withoutSessionSettings(createChdbConnection({ path: target.path }) as unknown as ClientConnection) });
}

/**
 * chDB turns a call's `clickhouse_settings` into SET statements on the process's one session, so
 * they would outlive the call and apply to every later statement (one query's limits to the
 * worker's upkeep). Embedded calls therefore take no settings: `log_comment` is dropped (chDB
 * keeps no query log) and anything else is refused; a statement that needs a setting says so in
 * its own SETTINGS clause, which works on a ClickHouse server too.
 */
export function withoutSessionSettings<C extends ConnectionMethods>(connection: C): C {
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
  const scoped: ConnectionMethods = {
    query: (params) => connection.query(strip(params)),
    exec: (params) => connection.exec(strip(params)),
    command: (params) => connection.command(strip(params)),
    insert: (params) => connection.insert(strip(params)),
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

export function describeTarget(target: ClickHouseTarget): string {
  if (target.kind === 'embedded') return `embedded chDB at ${target.path}`;
  const url = new URL(target.url);
  return `ClickHouse server ${url.protocol}//${url.host} database ${target.database}`;
}
