import { existsSync } from 'node:fs';
import path from 'node:path';
import { ROOT, startProcess, waitFor, type ServerProcess } from './processes';

/**
 * TEST SUPPORT ONLY: a ClickHouse HTTP endpoint served by chDB in a process of its own
 * (chdb-http-server.main.ts), so several role processes can share one ClickHouse in a test.
 * Production runs a real ClickHouse server or cluster.
 */
export interface ChdbHttpServer {
  /** For CLICKHOUSE_URL. */
  url: string;
  process: ServerProcess;
  stop(): Promise<void>;
}

/** Starts the endpoint on a free port over `dataDir`, creating `databases` (a server's database must exist before the roles start). */
export async function startChdbHttpServer(dataDir: string, databases: string[] = ['spanforge']): Promise<ChdbHttpServer> {
  const entry = path.join(ROOT, 'dist', 'test', 'support', 'chdb-http-server.main.js');
  if (!existsSync(entry)) throw new Error(`${entry} is missing: run \`npm run build\` first`);
  const args = ['--path', dataDir, '--port', '0', '--host', '127.0.0.1', ...databases.flatMap((d) => ['--database', d])];
  const child = startProcess(entry, {}, args);
  const listening = () => /listening on (http:\/\/\S+)/.exec(child.stdout())?.[1];
  await waitFor(() => listening() !== undefined || child.child.exitCode !== null, 'the chDB HTTP endpoint to listen', 60_000);
  const url = listening();
  if (!url) throw new Error(`chdb-http-server exited (${child.child.exitCode}): ${child.stderr()}`);
  return {
    url,
    process: child,
    async stop() {
      if (child.child.exitCode !== null || child.child.signalCode !== null) return;
      child.child.kill('SIGTERM');
      await child.exited;
    },
  };
}
