import net from 'node:net';
import { createQueueBackend } from './queue.backend';

/** A local port nobody listens on: connections to it are refused at once. */
async function closedPort(): Promise<number> {
  const server = net.createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as net.AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

describe('queue backend errors', () => {
  it('says why Redis is unreachable, once per connection and queue per 10 s, and the held-back count at close', async () => {
    const lines: string[] = [];
    const log = {
      warn: (m: string) => lines.push(`WARN ${m}`),
      error: (m: string) => lines.push(`ERROR ${m}`),
      debug: (m: string) => lines.push(`DEBUG ${m}`),
    };
    const port = await closedPort();
    const backend = createQueueBackend({ databaseUrl: 'postgres://unused', redisUrl: `redis://:secret@127.0.0.1:${port}`, log });
    backend.queue('ingest');
    // ioredis reconnects after 50, 100, 150 ... ms: several refused attempts in this time, each an 'error' event.
    await new Promise((resolve) => setTimeout(resolve, 1_500));
    expect([...lines].sort()).toEqual([
      `WARN Redis connection of the producers (127.0.0.1:${port}): connect ECONNREFUSED 127.0.0.1:${port}`,
      `WARN queue "ingest" (redis): connect ECONNREFUSED 127.0.0.1:${port}`,
    ]);
    await backend.close();
    // Closing a connection that never came up is expected to fail QUIT: said at debug, then dropped.
    expect(lines.filter((l) => l.startsWith('DEBUG'))).toEqual([
      expect.stringMatching(/^DEBUG Redis connection did not take QUIT \(.+\); disconnecting it$/),
    ]);
    // What was held back is said at close, with its count.
    const summaries = lines.filter((l) => l.startsWith('WARN') && l.includes(' such warning'));
    expect(summaries).toHaveLength(2);
    for (const line of summaries)
      expect(line).toMatch(
        new RegExp(`ECONNREFUSED 127\\.0\\.0\\.1:${port} \\[\\d+ such warnings? in the last \\d+ s; only the latest shown\\]$`),
      );
    expect(lines.join('\n')).not.toContain('secret');
  });
});
