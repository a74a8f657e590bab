import path from 'node:path';
import { builtLib, inProcessOfItsOwn, temporaryRootForFile } from '../support/engine-process';

jest.setTimeout(120_000);

const root = temporaryRootForFile('spanforge-engine-allocator-');

/**
 * Opens the embedded engine as the all-in-one does (createClickHouseClient, built in dist/), in a
 * process of its own with `JE_MALLOC_CONF` as given (unset when undefined): the allocator reads its
 * options once, from the C environment, when libchdb is loaded, and a test file's process.env is
 * Jest's copy, which never reaches it (this process's engines run with what the test run's global
 * setup put in the environment). Answers the
 * decay the engine reports and what the all-in-one's start-up says of it (its log lines).
 * `plainFirst`: a connection of chDB's own loads the library before the client is opened.
 */
async function openEngine(options: { conf?: string; plainFirst?: boolean }): Promise<{ decayMs: number | null; log: string }> {
  const script = `
    const [clientPath, modulePath, loggerPath, configPath, dir, plainFirst] = process.argv.slice(1);
    const plain = plainFirst === 'true' ? require('chdb/connection').createChdbConnection({ path: dir }) : undefined;
    const { createClickHouseClient, engineAllocatorDecayMs } = require(clientPath);
    const { reportEngineAllocator } = require(modulePath);
    const { Logger } = require(loggerPath);
    const { engineAllocatorOptions } = require(configPath);
    (async () => {
      const client = createClickHouseClient({ kind: 'embedded', path: dir, conditionCacheMiB: 2 });
      await reportEngineAllocator(client, engineAllocatorOptions(), new Logger('info').child('clickhouse'));
      process.stdout.write(JSON.stringify({ decayMs: await engineAllocatorDecayMs(client) }));
      await client.close();
      await plain?.close();
    })().catch((error) => { process.stderr.write(String(error && error.stack)); process.exit(1); });
  `;
  const dir = path.join(root(), `engine-${options.conf ?? 'unset'}-${options.plainFirst ? 'plain-first' : 'client-first'}`);
  const env = { ...process.env };
  delete env.JE_MALLOC_CONF;
  if (options.conf !== undefined) env.JE_MALLOC_CONF = options.conf;
  const args = [
    builtLib('clickhouse', 'src', 'index.js'),
    builtLib('runtime', 'src', 'modules', 'clickhouse.module.js'),
    builtLib('runtime', 'src', 'logger.js'),
    builtLib('config', 'src', 'index.js'),
    dir,
    options.plainFirst === true,
  ];
  const { stdout, stderr } = await inProcessOfItsOwn(script, args, env);
  return { decayMs: (JSON.parse(stdout) as { decayMs: number | null }).decayMs, log: stderr };
}

/** The embedded engine's allocator takes its options from JE_MALLOC_CONF (libs/config/src/config.ts, setEngineAllocatorOptions). */
describe("the embedded engine's allocator", () => {
  it('hands freed pages back after 1000 ms when the operator sets nothing, and the start-up says so', async () => {
    const engine = await openEngine({});
    expect(engine.decayMs).toBe(1000);
    expect(engine.log).toContain(
      'INFO  [clickhouse] embedded engine: its allocator hands freed pages back after 1000 ms (JE_MALLOC_CONF="dirty_decay_ms:1000")',
    );
    expect(engine.log).not.toContain('WARN');
  });

  it("takes the operator's decay", async () => {
    const engine = await openEngine({ conf: 'dirty_decay_ms:250' });
    expect(engine.decayMs).toBe(250);
    expect(engine.log).toContain('its allocator hands freed pages back after 250 ms (JE_MALLOC_CONF="dirty_decay_ms:250")');
  });

  it('keeps its own when something else loaded the engine first, and the start-up warns', async () => {
    const engine = await openEngine({ plainFirst: true });
    // chDB's own decay: the options were set after the library read them.
    expect(engine.decayMs).not.toBeNull();
    expect(engine.decayMs).not.toBe(1000);
    expect(engine.log).toContain(
      `WARN  [clickhouse] embedded engine: its allocator hands freed pages back after ${engine.decayMs} ms, ` +
        'not after 1000 ms as JE_MALLOC_CONF="dirty_decay_ms:1000" asks: libchdb was loaded before they were set',
    );
  });
});
