import type { ErasureJob } from '@spanforge/ingest';
import { ErasureRunner } from './erasure.runner';

const job = (id: string): ErasureJob => ({
  id,
  tenantId: 't',
  projectId: 'p',
  requestedBy: 'admin',
  userId: null,
  sessionId: 's',
  traceIds: [],
  traceCount: 2,
  status: 'RUNNING',
  requestedAt: new Date(0),
  startedAt: new Date(0),
  completedAt: null,
  lastError: null,
});

describe('ErasureRunner', () => {
  it('runs every waiting job, completes each, and gives a failed one back with its reason', async () => {
    const waiting = [job('a'), job('b'), job('c')];
    const done: string[] = [];
    const released: Array<[string, string]> = [];
    const said: string[] = [];
    const runner = new ErasureRunner({
      claim: async () => waiting.shift(),
      erase: async (j) => {
        if (j.id === 'b') throw new Error('ClickHouse is away');
      },
      complete: async (j) => (done.push(j.id), 'COMPLETED'),
      release: async (j, error) => released.push([j.id, error]) > 0,
      log: { info: (m) => said.push(m), warn: (m) => said.push(`warn ${m}`), error: (m) => said.push(`error ${m}`) },
    });
    await runner.runAll();
    // A failure ends the round (the job is tried again on the next one); c waits for it.
    expect(done).toEqual(['a']);
    expect(released).toEqual([['b', 'ClickHouse is away']]);
    expect(said[1]).toBe('error erasure b (project p) failed; it is tried again');
    await runner.runAll();
    expect(done).toEqual(['a', 'c']);
  });

  it('says so when a job it ran was claimed again meanwhile, whether it finished or failed', async () => {
    const waiting = [job('slow'), job('failed')];
    const said: string[] = [];
    const runner = new ErasureRunner({
      claim: async () => waiting.shift(),
      erase: async (j) => {
        if (j.id === 'failed') throw new Error('ClickHouse is away');
      },
      complete: async () => undefined,
      release: async () => false,
      log: { info: (m) => said.push(m), warn: (m) => said.push(`warn ${m}`), error: (m) => said.push(`error ${m}`) },
    });
    await runner.runAll();
    expect(said[0]).toMatch(
      /^warn erasure slow \(project p, 2 trace\(s\)\) ran for \d+ ms and was claimed again meanwhile: its new holder completes it$/,
    );
    expect(said.slice(1)).toEqual([
      'error erasure failed (project p) failed; it is tried again',
      'warn erasure failed: not given back, it was claimed again meanwhile and its new holder runs it',
    ]);
  });

  it('says so when a job it ran goes back to waiting, and runs it again', async () => {
    const waiting = [job('late')];
    const said: string[] = [];
    let runs = 0;
    const runner = new ErasureRunner({
      claim: async () => waiting.shift(),
      erase: async () => void runs++,
      // Spans of its traces were stored during the first run: the job is waiting again.
      complete: async (j) => (runs === 1 ? (waiting.push(j), 'PENDING') : 'COMPLETED'),
      release: async () => true,
      log: { info: (m) => said.push(m), warn: (m) => said.push(`warn ${m}`), error: (m) => said.push(`error ${m}`) },
    });
    await runner.runAll();
    expect(runs).toBe(2);
    expect(said[0]).toMatch(
      /^erasure late \(project p, 2 trace\(s\)\) ran in \d+ ms; spans of its traces were stored meanwhile, so it runs again$/,
    );
    expect(said[1]).toMatch(/^erasure late \(project p, 2 trace\(s\)\) completed in \d+ ms$/);
  });

  it('says so when looking for a job fails, and stops', async () => {
    const said: string[] = [];
    const runner = new ErasureRunner({
      claim: async () => {
        throw new Error('PostgreSQL is away');
      },
      erase: async () => undefined,
      complete: async () => 'COMPLETED',
      release: async () => true,
      log: { info: (m) => said.push(m), warn: (m) => said.push(`warn ${m}`), error: (m) => said.push(`error ${m}`) },
    });
    await runner.runAll();
    expect(said).toEqual(['error erasure: looking for a job failed; trying again shortly']);
    await runner.stop();
  });
});
