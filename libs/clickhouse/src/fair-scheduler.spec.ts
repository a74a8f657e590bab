import { FairScheduler, currentLane, scheduledClient } from './fair-scheduler';

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

  it('shares engine time, not turns: a light project goes next after the statement in progress, again and again', async () => {
    const scheduler = new FairScheduler(1);
    const log: string[] = [];
    const takes = (name: string, ms: number) => async () => {
      log.push(name);
      await new Promise((r) => setTimeout(r, ms));
    };
    // A's statements take 30 ms, B's 1 ms: all queued while A's first runs.
    const runs = [scheduler.run('A', takes('a0', 30))];
    await tick();
    runs.push(scheduler.run('A', takes('a1', 30)), scheduler.run('A', takes('a2', 30)));
    runs.push(scheduler.run('B', takes('b0', 1)), scheduler.run('B', takes('b1', 1)), scheduler.run('B', takes('b2', 1)));
    await Promise.all(runs);
    // Taking turns would give a0 b0 a1 b1 a2 b2: B waited for one of A's statements per statement of its own.
    expect(log).toEqual(['a0', 'b0', 'b1', 'b2', 'a1', 'a2']);
  });

  it('reports each statement’s wait for its slot', async () => {
    const scheduler = new FairScheduler(1);
    const waits: Array<[string, number]> = [];
    scheduler.observeWaits((participant, ms) => waits.push([participant, ms]));
    const first = scheduler.run('A', () => new Promise((r) => setTimeout(r, 25)));
    const second = scheduler.run('B', async () => undefined);
    await Promise.all([first, second]);
    expect(waits.map(([participant]) => participant)).toEqual(['A', 'B']);
    expect(waits[0]![1]).toBeLessThan(5);
    // B waited for A's statement: about its 25 ms.
    expect(waits[1]![1]).toBeGreaterThanOrEqual(20);
  });

  it('reports each statement’s time at the engine as it ends', async () => {
    const scheduler = new FairScheduler(1);
    const runs: Array<[string, number, string]> = [];
    scheduler.observeRuns((participant, ms, statement) => runs.push([participant, ms, statement]));
    await Promise.all([
      scheduler.run('A', () => new Promise((r) => setTimeout(r, 25)), 'query.slow'),
      scheduler.run('B', async () => undefined),
    ]);
    expect(runs.map(([participant, , statement]) => [participant, statement])).toEqual([
      ['A', 'query.slow'],
      ['B', ''],
    ]);
    // A's time is its own 25 ms; B's excludes the 25 ms it waited.
    expect(runs[0]![1]).toBeGreaterThanOrEqual(20);
    expect(runs[1]![1]).toBeLessThan(5);
  });

  it("gives a weighted participant (the worker) that many times another's share of the time", async () => {
    const scheduler = new FairScheduler(1);
    scheduler.setWeight('worker', 3);
    const log: string[] = [];
    const takes = (name: string) => async () => {
      log.push(name);
      await new Promise((r) => setTimeout(r, 20));
    };
    const runs: Array<Promise<void>> = [scheduler.run('A', takes('a0'))];
    await tick();
    for (let i = 1; i < 4; i++) runs.push(scheduler.run('A', takes(`a${i}`)));
    for (let i = 0; i < 6; i++) runs.push(scheduler.run('worker', takes(`w${i}`)));
    await Promise.all(runs);
    // While both are busy, the worker runs about three statements for each of A's.
    const firstSix = log.slice(1, 7);
    expect(firstSix.filter((name) => name.startsWith('w')).length).toBeGreaterThanOrEqual(4);
    expect(log.filter((name) => name.startsWith('a'))).toEqual(['a0', 'a1', 'a2', 'a3']);
  });

  it('gives a participant that was idle no credit and no debt: it starts level with the least-served busy one', async () => {
    const scheduler = new FairScheduler(1);
    const log: string[] = [];
    const takes = (name: string, ms: number) => async () => {
      log.push(name);
      await new Promise((r) => setTimeout(r, ms));
    };
    // B uses 60 ms alone, goes idle; A is busy meanwhile and after.
    await scheduler.run('B', takes('b-alone', 60));
    const runs = [scheduler.run('A', takes('a0', 10))];
    await tick();
    runs.push(scheduler.run('A', takes('a1', 10)), scheduler.run('A', takes('a2', 10)));
    // B again: its 60 ms of before are no debt (it would otherwise wait for all of A's).
    runs.push(scheduler.run('B', takes('b0', 10)));
    await Promise.all(runs);
    expect(log.indexOf('b0')).toBeLessThan(log.indexOf('a2'));
  });

  it('names the statements of a scheduled client after their query ids', async () => {
    const scheduler = new FairScheduler(1);
    const names: string[] = [];
    scheduler.observeRuns((_participant, _ms, statement) => names.push(statement));
    const client = scheduledClient({ query: async (_params: { query_id?: string }) => 'answer' }, scheduler, 'worker');
    await client.query({ query_id: 'upkeep.trace_figures:5f0c7c1e-0000-4000-8000-000000000000' });
    await client.query({});
    expect(names).toEqual(['upkeep.trace_figures', '']);
  });
});

describe('FairScheduler express lane (the embedded engine)', () => {
  const express = () => new FairScheduler(1, { slots: 1, lightStatementMs: 50 });
  /** A statement that records its lane as it starts and finishes when released. */
  function laned(log: string[], name: string) {
    const g = gate(log, name);
    return { ...g, work: () => (log.push(`${name}:${currentLane()}`), g.work()) };
  }
  const lanes = (log: string[]) => log.filter((entry) => entry.includes(':'));
  /** An insert: no bound parameters, so a statement in the express lane runs beside it. */
  const INSERT = { name: 'ingest.insert_spans', bound: false };
  /** Gives `participant` a short run of `name` (nothing else running): its statements of that name are light. */
  const seen = (scheduler: FairScheduler, participant: string, name = 'query.read') =>
    scheduler.run(participant, async () => undefined, name);

  it("starts a sequential client's short statement beside a long insert in progress, not after it", async () => {
    const scheduler = express();
    const log: string[] = [];
    await seen(scheduler, 'B');
    const insert = laned(log, 'w0');
    const dashboard = laned(log, 'b0');
    const running = scheduler.run('worker', insert.work, INSERT);
    await tick();
    const read = scheduler.run('B', dashboard.work, 'query.read');
    await tick();
    // B started while the worker's statement still holds the shared slot, on the other connection.
    expect(lanes(log)).toEqual(['w0:main', 'b0:express']);
    dashboard.release();
    await read;
    insert.release();
    await running;
    // Without an express lane, B would wait for the statement in progress.
    const plain = new FairScheduler(1);
    const order: string[] = [];
    const w = laned(order, 'w0');
    const b = laned(order, 'b0');
    const both = [plain.run('worker', w.work, INSERT), plain.run('B', b.work, 'query.read')];
    await tick();
    expect(lanes(order)).toEqual(['w0:main']);
    w.release();
    await tick();
    b.release();
    await Promise.all(both);
    expect(lanes(order)).toEqual(['w0:main', 'b0:main']);
  });

  it('waits for a statement in progress that binds parameters (chDB would run it first anyway)', async () => {
    const scheduler = express();
    const log: string[] = [];
    await seen(scheduler, 'B');
    const upkeep = laned(log, 'w0');
    const dashboard = laned(log, 'b0');
    const runs = [scheduler.run('worker', upkeep.work, 'ingest.refresh_trace_figures')];
    await tick();
    runs.push(scheduler.run('B', dashboard.work, 'query.read'));
    await tick();
    expect(lanes(log)).toEqual(['w0:main']);
    upkeep.release();
    await tick();
    dashboard.release();
    await Promise.all(runs);
    expect(lanes(log)).toEqual(['w0:main', 'b0:main']);
  });

  it('keeps a project with several statements at once, and the worker, in the shared slot', async () => {
    const scheduler = express();
    scheduler.keepOffExpress('worker');
    await seen(scheduler, 'A');
    await seen(scheduler, 'worker', 'ingest.insert_spans');
    const log: string[] = [];
    const a = Array.from({ length: 4 }, (_, i) => laned(log, `a${i}`));
    const w = laned(log, 'w0');
    const runs = [scheduler.run('A', a[0]!.work, { name: 'query.read', bound: false })];
    await tick();
    // The worker's statement finds the shared slot taken: it waits, though the express lane is free.
    runs.push(scheduler.run('worker', w.work, INSERT));
    // A's others arrive while its first runs: A is not a sequential client now.
    runs.push(...a.slice(1).map((g) => scheduler.run('A', g.work, 'query.read')));
    await tick();
    expect(lanes(log)).toEqual(['a0:main']);
    a[0]!.release();
    for (const g of [w, ...a.slice(1)]) {
      await tick();
      g.release();
    }
    await Promise.all(runs);
    expect(lanes(log).every((entry) => entry.endsWith(':main'))).toBe(true);
  });

  it('gives the express slot, when it frees, to a sequential client that arrived while it was taken', async () => {
    const scheduler = express();
    await seen(scheduler, 'B');
    await seen(scheduler, 'C');
    const log: string[] = [];
    const [w, b, c] = [laned(log, 'w0'), laned(log, 'b0'), laned(log, 'c0')];
    const runs = [scheduler.run('worker', w.work, INSERT)];
    await tick();
    runs.push(scheduler.run('B', b.work, 'query.read'));
    await tick();
    runs.push(scheduler.run('C', c.work, 'query.read'));
    await tick();
    expect(lanes(log)).toEqual(['w0:main', 'b0:express']);
    b.release();
    await tick();
    await tick();
    // C goes as soon as B's express statement ends, while the worker still holds the shared slot.
    expect(lanes(log)).toEqual(['w0:main', 'b0:express', 'c0:express']);
    c.release();
    w.release();
    await Promise.all(runs);
  });

  it('sends a statement whose recent runs were long, or that was never seen, to the shared slot', async () => {
    const scheduler = express();
    const log: string[] = [];
    // H's reports take 80 ms (over the 50 ms a light one may average), run alone; its reads are short.
    for (let i = 0; i < 2; i++) await scheduler.run('H', () => new Promise((r) => setTimeout(r, 80)), 'query.report');
    await seen(scheduler, 'H');
    const w = laned(log, 'w0');
    const report = laned(log, 'h-report');
    const runs = [scheduler.run('worker', w.work, INSERT)];
    await tick();
    runs.push(scheduler.run('H', report.work, 'query.report'));
    await tick();
    expect(lanes(log)).toEqual(['w0:main']);
    w.release();
    await tick();
    report.release();
    await Promise.all(runs);
    // A statement of a name never run before waits too; one of a short name goes beside.
    const [w1, unseen, read] = [laned(log, 'w1'), laned(log, 'h-unseen'), laned(log, 'h-read')];
    const more = [scheduler.run('worker', w1.work, INSERT)];
    await tick();
    more.push(scheduler.run('H', unseen.work, 'query.new'));
    await tick();
    expect(lanes(log).slice(2)).toEqual(['w1:main']);
    w1.release();
    await tick();
    unseen.release();
    await Promise.all(more);
    const [w2] = [laned(log, 'w2')];
    const last = [scheduler.run('worker', w2.work, INSERT)];
    await tick();
    last.push(scheduler.run('H', read.work, 'query.read'));
    await tick();
    expect(lanes(log).slice(4)).toEqual(['w2:main', 'h-read:express']);
    read.release();
    w2.release();
    await Promise.all(last);
  });

  it('holds a client sending short statements back to back to its share of the lane, over about the last second', async () => {
    let now = 0;
    const scheduler = new FairScheduler(1, { slots: 1, lightStatementMs: 50, maxShare: 0.5 }, () => now);
    const started: string[] = [];
    scheduler.observeWaits((participant, _ms, lane) => started.push(`${participant}:${lane}`));
    await seen(scheduler, 'B');
    const insert = gate([], 'w0');
    const running = scheduler.run('worker', insert.work, INSERT);
    await tick();
    // B's reads of 40 ms each, back to back, while the worker's insert holds the shared slot: each
    // takes the lane and adds its 40 ms to B's time there, which decays over 1,000 ms.
    let expressReads = 0;
    let waiting: Promise<unknown> | undefined;
    for (let i = 0; i < 30 && !waiting; i++) {
      const g = gate([], 'b');
      const before = started.length;
      const read = scheduler.run('B', g.work, 'query.read');
      await tick();
      if (started.length === before) waiting = read.then(() => started.at(-1));
      else {
        expect(started.at(-1)).toBe('B:express');
        expressReads++;
        now += 40;
        g.release();
        await read;
      }
      if (waiting) g.release();
    }
    // Once B held 500 ms' worth (half of the 1 s window), its next read waited for the shared slot,
    // i.e. for the insert, instead of taking the lane again.
    const held = (reads: number) => Array.from({ length: reads }, (_, i) => 40 * Math.exp((-40 * i) / 1000)).reduce((a, b) => a + b, 0);
    expect(waiting).toBeDefined();
    expect(held(expressReads - 1)).toBeLessThanOrEqual(500);
    expect(held(expressReads)).toBeGreaterThan(500);
    insert.release();
    await running;
    expect(await waiting).toBe('B:main');
    // After a second idle its share has decayed: beside the next insert it takes the lane again.
    now += 1000;
    const next = gate([], 'w1');
    const again = scheduler.run('worker', next.work, INSERT);
    await tick();
    const g = gate([], 'b');
    const read = scheduler.run('B', g.work, 'query.read');
    await tick();
    expect(started.at(-1)).toBe('B:express');
    g.release();
    next.release();
    await Promise.all([read, again]);
  });

  it('lets a client hold the whole lane by default', async () => {
    let now = 0;
    const scheduler = new FairScheduler(1, { slots: 1, lightStatementMs: 50 }, () => now);
    const lanesGot: string[] = [];
    scheduler.observeWaits((_participant, _ms, lane) => lanesGot.push(lane));
    await seen(scheduler, 'B');
    const insert = gate([], 'w0');
    const running = scheduler.run('worker', insert.work, INSERT);
    await tick();
    // 30 reads of 40 ms back to back: 1.2 s in the lane, more than a whole window's worth.
    for (let i = 0; i < 30; i++) {
      const g = gate([], 'b');
      const read = scheduler.run('B', g.work, 'query.read');
      await tick();
      now += 40;
      g.release();
      await read;
    }
    expect(lanesGot.slice(2)).toEqual(Array.from({ length: 30 }, () => 'express'));
    insert.release();
    await running;
  });

  it('tells the wait and run observers which lane each statement got', async () => {
    const scheduler = express();
    const waits: string[] = [];
    const runs: string[] = [];
    scheduler.observeWaits((participant, _ms, lane) => waits.push(`${participant}:${lane}`));
    scheduler.observeRuns((participant, _ms, _statement, lane) => runs.push(`${participant}:${lane}`));
    await seen(scheduler, 'B');
    const [w, b] = [gate([], 'w0'), gate([], 'b0')];
    const all = [scheduler.run('worker', w.work, INSERT)];
    await tick();
    all.push(scheduler.run('B', b.work, 'query.read'));
    await tick();
    b.release();
    w.release();
    await Promise.all(all);
    expect(waits).toEqual(['B:main', 'worker:main', 'B:express']);
    expect(runs).toEqual(['B:main', 'B:express', 'worker:main']);
  });

  it('counts a scheduled call whose parameters the embedded session writes in as unbound, one left bound as bound', async () => {
    const scheduler = express();
    const log: string[] = [];
    let release!: () => void;
    const held = new Promise<void>((resolve) => (release = resolve));
    const client = {
      query: async (params: { query: string; query_id: string; query_params?: Record<string, unknown> }) => {
        log.push(`${params.query_id}:${currentLane()}`);
        if (params.query_id.startsWith('w')) await held;
      },
    };
    const worker = scheduledClient(client, scheduler, 'worker');
    const project = scheduledClient(client, scheduler, 'B');
    const read = { query: 'SELECT {id:String}', query_params: { id: 'x' } };
    await project.query({ ...read, query_id: 'b0' });
    // The worker's statement has parameters of types written in: the read goes beside it.
    const first = worker.query({ query: 'SELECT sleep({s:Float64})', query_params: { s: 1 }, query_id: 'w1' });
    await tick();
    await project.query({ ...read, query_id: 'b1' });
    expect(log.slice(1)).toEqual(['w1:main', 'b1:express']);
    release();
    await first;
    // A Bool stays bound for chDB, so the read waits for it.
    let releaseBound!: () => void;
    const heldBound = new Promise<void>((resolve) => (releaseBound = resolve));
    client.query = async (params) => {
      log.push(`${params.query_id}:${currentLane()}`);
      if (params.query_id.startsWith('w')) await heldBound;
    };
    const second = worker.query({ query: 'SELECT {flag:Bool}', query_params: { flag: true }, query_id: 'w2' });
    await tick();
    const waiting = project.query({ ...read, query_id: 'b2' });
    await tick();
    expect(log.slice(3)).toEqual(['w2:main']);
    releaseBound();
    await Promise.all([second, waiting]);
    expect(log.slice(3)).toEqual(['w2:main', 'b2:main']);
  });

  it('frees its slot when a wait observer throws', async () => {
    const scheduler = express();
    scheduler.observeWaits(() => {
      throw new Error('observer failed');
    });
    await expect(scheduler.run('A', async () => 'answer')).rejects.toThrow('observer failed');
    // Had the first kept its slot, the second would wait for ever instead of getting its turn.
    await expect(scheduler.run('A', async () => 'answer')).rejects.toThrow('observer failed');
    expect(scheduler.queued).toBe(0);
  });
});
