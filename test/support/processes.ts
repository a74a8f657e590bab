import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdirSync } from 'node:fs';
import path from 'node:path';
import { findFreePort, reachableClusterDir } from '@spanforge/postgres';

export const ROOT = path.resolve(__dirname, '..', '..');

/** The built entry point of a role; `npm test` builds before running the suites. */
export function entryPoint(role: 'all-in-one' | 'gateway' | 'worker' | 'api'): string {
  const file = path.join(ROOT, 'dist', 'apps', role, 'main.js');
  if (!existsSync(file)) throw new Error(`${file} is missing: run \`npm run build\` first (npm test does)`);
  return file;
}

export interface ServerProcess {
  child: ChildProcess;
  stdout: () => string;
  stderr: () => string;
  exited: Promise<number | null>;
}

export function startProcess(file: string, env: Record<string, string>, args: string[] = []): ServerProcess {
  let stdout = '';
  let stderr = '';
  // The test's own environment minus anything that would point the server elsewhere.
  const inherited = Object.fromEntries(
    Object.entries(process.env).filter(
      ([k]) => !/^(DATABASE_URL|CLICKHOUSE_|REDIS_URL|ADMIN_TOKEN|API_KEY_PEPPER|DATA_DIR|.*_PORT)$/.test(k),
    ),
  );
  const child = spawn(process.execPath, [file, ...args], { cwd: ROOT, env: { ...inherited, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
  child.stdout!.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
  child.stderr!.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
  return { child, stdout: () => stdout, stderr: () => stderr, exited };
}

export async function waitFor(condition: () => boolean | Promise<boolean>, what: string, timeoutMs = 60_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (await condition()) return;
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
}

export async function freePorts(): Promise<{ OTLP_HTTP_PORT: string; OTLP_GRPC_PORT: string; API_PORT: string }> {
  const [a, b, c] = await Promise.all([findFreePort(), findFreePort(), findFreePort()]);
  return { OTLP_HTTP_PORT: String(a), OTLP_GRPC_PORT: String(b), API_PORT: String(c) };
}

/** Pids of the postgres servers of a DATA_DIR (wherever its cluster lives, see reachableClusterDir). */
export async function postgresPidsFor(dataDir: string): Promise<number[]> {
  const { readdir, readFile } = await import('node:fs/promises');
  const dir = reachableClusterDir(dataDir).dir;
  const pids: number[] = [];
  for (const entry of await readdir('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    const cmdline = await readFile(`/proc/${entry}/cmdline`, 'utf8').catch(() => '');
    if (cmdline.includes('postgres') && cmdline.includes(dir)) pids.push(Number(entry));
  }
  return pids;
}

/**
 * A `redis-server` (the Debian package) on a loopback port: throwaway by default; with `dir`, every
 * write is in its append-only file before it is answered (`appendfsync always`), so starting it
 * again on the same `dir` and `port` is a restart that keeps everything acknowledged.
 */
export async function startRedisServer(
  options: { port?: number; dir?: string } = {},
): Promise<{ url: string; port: number; child: ChildProcess; stop(): Promise<void> }> {
  const port = options.port ?? (await findFreePort());
  const persistence = options.dir ? ['--dir', options.dir, '--appendonly', 'yes', '--appendfsync', 'always'] : ['--appendonly', 'no'];
  if (options.dir) mkdirSync(options.dir, { recursive: true });
  const child = spawn('redis-server', ['--port', String(port), '--bind', '127.0.0.1', '--save', '', ...persistence], {
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  child.stdout!.on('data', (chunk: Buffer) => (out += chunk.toString()));
  const spawned = await new Promise<Error | undefined>((resolve) => {
    child.once('error', resolve);
    child.once('spawn', () => resolve(undefined));
  });
  if (spawned) throw new Error(`redis-server could not start (apt-get install redis-server): ${spawned.message}`);
  await waitFor(() => out.includes('Ready to accept connections') || child.exitCode !== null, 'redis-server to accept connections', 10_000);
  if (child.exitCode !== null) throw new Error(`redis-server exited with ${child.exitCode}: ${out}`);
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  return {
    url: `redis://127.0.0.1:${port}`,
    port,
    child,
    async stop() {
      if (child.exitCode !== null || child.signalCode !== null) return;
      child.kill('SIGTERM');
      await exited;
    },
  };
}
