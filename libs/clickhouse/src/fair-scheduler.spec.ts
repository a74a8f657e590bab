import { FairScheduler } from './fair-scheduler';

/** A statement that finishes when released, recording when it started. */
function gate(log: string[], name: string) {
  let release!: () => void;
  const done = new Promise<void>((resolve) => (release = resolve));
  return { work: async () => void (log.push(name), await done), release };
}

const tick = () => new Promise((resolve) => setImmediate(resolve));

describe('FairScheduler', () => {
  it('gives a waiting project the next slot, however much another queued before it', async () => {
    const scheduler = new FairScheduler(1);
    const log: string[] = [];
    const a = Array.from({ length: 5 }, (_, i) => gate(log, `a${i}`));
    const b = gate(log, 'b0');
    const runs = a.map((g) => scheduler.run('A', g.work));
    await tick();
    runs.push(scheduler.run('B', b.work));
    await tick();
    expect(log).toEqual(['a0']);
    expect(scheduler.queued).toBe(5);
    a[0]!.release();
    await tick();
    // B's one statement goes before A's four others.
    expect(log).toEqual(['a0', 'b0']);
    b.release();
    for (const g of a.slice(1)) {
      await tick();
      g.release();
    }
    await Promise.all(runs);
    expect(log).toEqual(['a0', 'b0', 'a1', 'a2', 'a3', 'a4']);
  });

  it('runs up to its slots at once and frees a slot when work fails', async () => {
    const scheduler = new FairScheduler(2);
    const log: string[] = [];
    const gates = Array.from({ length: 3 }, (_, i) => gate(log, `s${i}`));
    const failing = scheduler.run('A', async () => {
      log.push('fails');
      throw new Error('boom');
    });
    await expect(failing).rejects.toThrow('boom');
    const runs = gates.map((g, i) => scheduler.run(i === 2 ? 'B' : 'A', g.work));
    await tick();
    expect(log).toEqual(['fails', 's0', 's1']);
    gates[0]!.release();
    await tick();
    expect(log).toContain('s2');
    gates[1]!.release();
    gates[2]!.release();
    await Promise.all(runs);
  });
});
