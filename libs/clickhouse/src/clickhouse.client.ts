import { createClient, type ClickHouseClient } from '@clickhouse/client';
import path from 'node:path';

export type { ClickHouseClient } from '@clickhouse/client';

export type ClickHouseTarget =
  | { kind: 'server'; url: string; username: string; password: string; database: string }
  /** chDB in-process; it binds one data directory per process and always uses database `default`. */
  | { kind: 'embedded'; path: string };

export function clickHouseTarget(config: { dataDir: string; clickhouse?: { url: string; username: string; password: string; database: string } }): ClickHouseTarget {
  return config.clickhouse ? { kind: 'server', ...config.clickhouse } : { kind: 'embedded', path: path.join(config.dataDir, 'clickhouse') };
}

/** Same `ClickHouseClient` either way; only the connection differs (ARCHITECTURE decision 1). */
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
  // Loaded lazily: the ~560 MB libchdb is only mapped when embedded mode is chosen.
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  const { createChdbConnection } = require('chdb/connection') as typeof import('chdb/connection');
  // chdb types its Connection against @clickhouse/client-common, the client against its own copy of the same interface.
  type ClientConnection = NonNullable<NonNullable<Parameters<typeof createClient>[0]>['connection']>;
  return createClient({ connection: createChdbConnection({ path: target.path }) as unknown as ClientConnection });
}

export function describeTarget(target: ClickHouseTarget): string {
  if (target.kind === 'embedded') return `embedded chDB at ${target.path}`;
  const url = new URL(target.url);
  return `ClickHouse server ${url.protocol}//${url.host} database ${target.database}`;
}
