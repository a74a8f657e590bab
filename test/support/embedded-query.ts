import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import path from 'node:path';

const run = promisify(execFile);

/**
 * Runs one query against the chDB data of a stopped server in a separate process: chDB binds one
 * data directory per process, and this test process may already hold another one.
 */
export async function queryEmbeddedClickHouse<T>(dataDir: string, query: string, params: Record<string, unknown> = {}): Promise<T[]> {
  const script = `
    const { createClient } = require('@clickhouse/client');
    const { createChdbConnection } = require('chdb/connection');
    const [path, query, params] = process.argv.slice(1);
    const client = createClient({ connection: createChdbConnection({ path }) });
    client.query({ query, query_params: JSON.parse(params), format: 'JSONEachRow' })
      .then((r) => r.json())
      .then((rows) => { process.stdout.write(JSON.stringify(rows)); return client.close(); })
      .catch((e) => { process.stderr.write(String(e && e.message)); process.exit(1); });
  `;
  const { stdout } = await run(process.execPath, ['-e', script, path.join(dataDir, 'clickhouse'), query, JSON.stringify(params)], {
    cwd: path.resolve(__dirname, '..', '..'),
    maxBuffer: 64 * 1024 * 1024,
  });
  return JSON.parse(stdout) as T[];
}
