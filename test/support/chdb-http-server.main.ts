/**
 * TEST SUPPORT ONLY: a ClickHouse HTTP endpoint served from chDB, so tests can run the gateway,
 * worker and api as separate processes against one ClickHouse. Production uses a real ClickHouse
 * server or cluster. It speaks just what @clickhouse/client sends: the statement in the POST body
 * or the `query` URL parameter (an insert's rows then in the body, gzip or not), `database`,
 * `query_id`, `param_<name>` bound parameters (already in ClickHouse's escaped text form, handed to
 * the engine as they are), `default_format`, settings as URL parameters, `GET /ping`; answers with
 * X-ClickHouse-Query-Id / -Summary and, on error, HTTP 500 with `Code: N. DB::Exception: …` and
 * X-ClickHouse-Exception-Code.
 *
 * chDB binds one data directory to the process and keeps `SET` settings and `USE` for the whole
 * process, so statements run one at a time: a call's settings are set before its statement and put
 * back after it, its database is `USE`d first, and nothing else can run in between.
 *
 *   node dist/test/support/chdb-http-server.main.js --path DIR [--port 0] [--host 127.0.0.1] [--database NAME]…
 */
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import { randomUUID } from 'node:crypto';
import { mkdirSync } from 'node:fs';
import path from 'node:path';
import { gunzipSync, inflateSync } from 'node:zlib';
import { setEngineAllocatorOptions } from '@spanforge/config';

interface NativeResult {
  bytes: Uint8Array;
  elapsed: number;
  rowsRead: number;
  bytesRead: number;
}
interface ChdbNative {
  QueryAsyncConnection(connection: unknown, sql: string, format: string, params?: Record<string, string>): Promise<NativeResult>;
}

// The engine's allocator takes its options when libchdb is loaded, as in the embedded mode.
setEngineAllocatorOptions();
// The session's own queryBindAsync re-escapes string values; the HTTP parameters arrive escaped
// already, so they go to the addon as they are (the same addon instance the session loaded).
/* eslint-disable @typescript-eslint/no-require-imports */
const { Session } = require('chdb') as typeof import('chdb');
const native = require(path.join(path.dirname(require.resolve('chdb')), 'dist', 'loader.js')).loadNative() as ChdbNative;
/* eslint-enable @typescript-eslint/no-require-imports */

/** Settings of the HTTP layer, meaningless to the engine (as chdb/connection drops them). */
const HTTP_ONLY_SETTINGS = new Set([
  'wait_end_of_query',
  'send_progress_in_http_headers',
  'http_response_buffer_size',
  'http_headers_progress_interval_ms',
  'http_send_progress_interval_ms',
  'enable_http_compression',
  'http_zlib_compression_level',
  'http_response_compression_method',
  'http_native_compression_disable_checksumming_on_decompress',
]);
/** URL parameters that are not settings. */
const REQUEST_PARAMETERS = new Set(['query', 'query_id', 'database', 'default_format', 'user', 'password', 'role']);

/** A refusal with ClickHouse's code and name, answered like the server's errors. */
class ServerError extends Error {
  constructor(
    readonly code: number,
    name: string,
    message: string,
  ) {
    super(`Code: ${code}. DB::Exception: ${message}. (${name})`);
  }
}

interface Statement {
  sql: string;
  database: string;
  format: string;
  params: Record<string, string>;
  settings: Array<[string, string]>;
}

function parseArguments(argv: string[]): { dataDir: string; port: number; host: string; databases: string[] } {
  const values = (name: string) => argv.flatMap((arg, i) => (arg === `--${name}` && argv[i + 1] !== undefined ? [argv[i + 1]!] : []));
  const dataDir = values('path')[0];
  if (!dataDir) throw new Error('--path DIR is required');
  return {
    dataDir: path.resolve(dataDir),
    port: Number(values('port')[0] ?? 0),
    host: values('host')[0] ?? '127.0.0.1',
    databases: values('database'),
  };
}

const IDENTIFIER = /^[A-Za-z_][A-Za-z0-9_]*$/;

async function readBody(request: IncomingMessage): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of request) chunks.push(chunk as Buffer);
  const raw = Buffer.concat(chunks);
  const encoding = request.headers['content-encoding'];
  if (encoding === 'gzip') return gunzipSync(raw).toString('utf8');
  if (encoding === 'deflate') return inflateSync(raw).toString('utf8');
  if (encoding && encoding !== 'identity')
    throw new ServerError(1, 'UNSUPPORTED_METHOD', `Content-Encoding ${encoding} is not supported here`);
  return raw.toString('utf8');
}

/** The statement a request asks for, as a ClickHouse server would read it. */
function statementOf(url: URL, body: string, contentType: string | undefined): Statement {
  if (contentType?.startsWith('multipart/')) {
    throw new ServerError(1, 'UNSUPPORTED_METHOD', 'multipart query parameters are not supported by the test chDB endpoint');
  }
  if (url.searchParams.has('session_id')) {
    throw new ServerError(1, 'UNSUPPORTED_METHOD', 'sessions are not supported by the test chDB endpoint (every statement is its own)');
  }
  const query = url.searchParams.get('query');
  // With `query` in the URL the body is the insert's data, which chDB reads inline after the statement.
  const sql = query !== null ? (body.length > 0 ? `${query}\n${body}` : query) : body;
  if (sql.trim() === '') throw new ServerError(62, 'SYNTAX_ERROR', 'Empty query');
  const database = url.searchParams.get('database') ?? 'default';
  if (!IDENTIFIER.test(database)) throw new ServerError(81, 'UNKNOWN_DATABASE', `Database ${database} does not exist`);
  const params: Record<string, string> = {};
  const settings: Array<[string, string]> = [];
  for (const [name, value] of url.searchParams) {
    if (name.startsWith('param_')) params[name.slice('param_'.length)] = value;
    else if (!REQUEST_PARAMETERS.has(name) && !HTTP_ONLY_SETTINGS.has(name)) {
      if (!IDENTIFIER.test(name)) throw new ServerError(115, 'UNKNOWN_SETTING', `Unknown setting ${name}`);
      settings.push([name, value]);
    }
  }
  return { sql, database, format: url.searchParams.get('default_format') ?? 'TabSeparated', params, settings };
}

const quote = (value: string) => `'${value.replace(/\\/g, '\\\\').replace(/'/g, "\\'")}'`;

class ChdbEndpoint {
  private readonly session: InstanceType<typeof Session>;
  private currentDatabase = 'default';
  /** chDB runs one statement at a time, and a call's USE and SETs must not leak into another's. */
  private tail: Promise<unknown> = Promise.resolve();

  constructor(dataDir: string) {
    mkdirSync(dataDir, { recursive: true, mode: 0o700 });
    // Started with the engine's own defaults, as a ClickHouse server without configuration: the
    // embedded mode's settings (a capped condition cache, merges at nice 19 beside its nice-19
    // shared lane; embeddedEngineArguments) are the all-in-one's, and this endpoint has no lanes.
    this.session = new Session(dataDir);
  }

  private raw(sql: string, format = 'TabSeparated', params?: Record<string, string>): Promise<NativeResult> {
    const connection = (this.session as unknown as { connection: unknown }).connection;
    return params && Object.keys(params).length > 0
      ? native.QueryAsyncConnection(connection, sql, format, params)
      : native.QueryAsyncConnection(connection, sql, format);
  }

  /** Runs one request's statement alone: its database, its settings for it only, then the statement. */
  run(statement: Statement): Promise<NativeResult> {
    const turn = this.tail.then(async () => {
      if (statement.database !== this.currentDatabase) {
        await this.raw(`USE ${statement.database}`);
        this.currentDatabase = statement.database;
      }
      if (statement.settings.length === 0) return this.raw(statement.sql, statement.format, statement.params);
      await this.raw(`SET ${statement.settings.map(([name, value]) => `${name} = ${quote(value)}`).join(', ')}`);
      try {
        return await this.raw(statement.sql, statement.format, statement.params);
      } finally {
        await this.raw(`SET ${statement.settings.map(([name]) => `${name} = DEFAULT`).join(', ')}`);
      }
    });
    // The next statement waits for this one to end, whether it failed or not: a failure is the
    // caller's, who gets it through `turn` (the request answers with ClickHouse's error).
    this.tail = turn.then(endedWith, endedWith);
    return turn;
  }

  close(): void {
    this.session.close();
  }
}

function summaryOf(result: NativeResult): string {
  const size = String(result.bytes.byteLength);
  return JSON.stringify({
    read_rows: String(result.rowsRead ?? 0),
    read_bytes: String(result.bytesRead ?? 0),
    written_rows: '0',
    written_bytes: '0',
    total_rows_to_read: '0',
    result_rows: String(result.rowsRead ?? 0),
    result_bytes: size,
    elapsed_ns: String(Math.round((result.elapsed ?? 0) * 1e9)),
  });
}

function answerError(response: ServerResponse, queryId: string, error: unknown): void {
  const message = error instanceof Error ? error.message : String(error);
  const code = /^Code: (\d+)\./.exec(message)?.[1];
  const text = code ? message : `Code: 1001. DB::Exception: ${message}. (STD_EXCEPTION)`;
  response.writeHead(500, {
    'content-type': 'text/plain; charset=UTF-8',
    'x-clickhouse-query-id': queryId,
    'x-clickhouse-exception-code': code ?? '1001',
  });
  response.end(`${text}\n`);
}

async function handle(endpoint: ChdbEndpoint, request: IncomingMessage, response: ServerResponse): Promise<void> {
  const url = new URL(request.url ?? '/', 'http://localhost');
  if (url.pathname === '/ping' || (url.pathname === '/' && request.method === 'GET' && !url.searchParams.has('query'))) {
    response.writeHead(200, { 'content-type': 'text/plain; charset=UTF-8' });
    response.end('Ok.\n');
    return;
  }
  const queryId = url.searchParams.get('query_id') ?? randomUUID();
  try {
    if (url.pathname !== '/') throw new ServerError(1, 'UNSUPPORTED_METHOD', `no handler for ${url.pathname}`);
    const statement = statementOf(url, await readBody(request), request.headers['content-type']);
    const result = await endpoint.run(statement);
    response.writeHead(200, {
      'content-type': 'text/plain; charset=UTF-8',
      'x-clickhouse-query-id': queryId,
      'x-clickhouse-summary': summaryOf(result),
      'x-clickhouse-timezone': 'UTC',
    });
    response.end(Buffer.from(result.bytes.buffer, result.bytes.byteOffset, result.bytes.byteLength));
  } catch (error) {
    answerError(response, queryId, error);
  }
}

async function main(): Promise<void> {
  const { dataDir, port, host, databases } = parseArguments(process.argv.slice(2));
  const endpoint = new ChdbEndpoint(dataDir);
  for (const database of databases) {
    if (!IDENTIFIER.test(database)) throw new Error(`--database ${database} is not a plain identifier`);
    await endpoint.run({
      sql: `CREATE DATABASE IF NOT EXISTS ${database}`,
      database: 'default',
      format: 'TabSeparated',
      params: {},
      settings: [],
    });
  }
  const server = createServer((request, response) => void handle(endpoint, request, response));
  server.keepAliveTimeout = 10_000;
  await new Promise<void>((resolve) => server.listen(port, host, resolve));
  const address = server.address();
  const bound = typeof address === 'object' && address ? address.port : port;
  process.stdout.write(`chdb-http-server listening on http://${host}:${bound} (data ${dataDir})\n`);
  const stop = () => {
    server.close();
    server.closeAllConnections();
    endpoint.close();
    process.exit(0);
  };
  process.once('SIGTERM', stop);
  process.once('SIGINT', stop);
}

main().catch((error: unknown) => {
  process.stderr.write(`chdb-http-server: ${error instanceof Error ? error.message : String(error)}\n`);
  process.exit(1);
});

/** A statement's end, whatever its outcome, for the line of statements behind it. */
function endedWith(): void {}
