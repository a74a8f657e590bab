import { ClockBound, ClockOffsetError, clockBoundClient, clockBoundOf, readClockOffset, type ClockProbe } from './clock-bound';

/** A probe over a fake local clock: each answer takes `rttMs` (half before the answer is taken, half after). */
function fakeProbe(serverOffsetMs: () => number, rttMs = 2) {
  let local = 1_000_000;
  const now = () => local;
  const answer = (offset: number) => {
    local += rttMs / 2;
    const value = local + offset;
    local += rttMs / 2;
    return value;
  };
  const probe: ClockProbe = {
    referenceMs: async () => answer(0),
    clickhouseMs: async () => answer(serverOffsetMs()),
  };
  return { probe, now };
}

function logs() {
  const lines: string[] = [];
  return { lines, log: { info: (m: string) => void lines.push(`info ${m}`), error: (m: string) => void lines.push(`error ${m}`) } };
}

describe('readClockOffset', () => {
  it.each([0, 37, -12.5])("finds a server %s ms off the reference, within its round trips' uncertainty", async (offset) => {
    const { probe, now } = fakeProbe(() => offset, 4);
    const reading = await readClockOffset(probe, now);
    expect(Math.abs(reading.offsetMs - offset)).toBeLessThanOrEqual(reading.uncertaintyMs);
    // Two round trips of 4 ms: the answers could have been taken anywhere in them.
    expect(reading.uncertaintyMs).toBe(4);
  });
});

describe('ClockBound', () => {
  it('refuses until a check shows the server within half the bound, and while it is beyond, saying so once', async () => {
    let offset = 3;
    const { probe, now } = fakeProbe(() => offset);
    const { lines, log } = logs();
    const bound = new ClockBound(probe, { maxOffsetMs: 10, log, now });
    expect(() => bound.assertWithin()).toThrow(/not known to be within ±5 ms .*not checked yet/);

    await bound.check();
    expect(bound.isWithin()).toBe(true);
    expect(() => bound.assertWithin()).not.toThrow();

    offset = 40;
    await bound.check();
    await bound.check();
    expect(bound.isWithin()).toBe(false);
    expect(() => bound.assertWithin()).toThrow(ClockOffsetError);
    expect(() => bound.assertWithin()).toThrow(/40\.0 ms .* not within ±5 ms/);
    expect(lines.filter((l) => l.startsWith('error'))).toHaveLength(1);

    offset = -2;
    await bound.check();
    expect(() => bound.assertWithin()).not.toThrow();
    expect(lines.at(-1)).toMatch(/^info .*within ±5 ms/);
  });

  it('counts the uncertainty against the server: slow round trips that could hide an offset beyond the bound refuse', async () => {
    // 2 ms off, but each answer could have been taken anywhere in a 10 ms round trip.
    const { probe, now } = fakeProbe(() => 2, 10);
    const bound = new ClockBound(probe, { maxOffsetMs: 10, log: logs().log, now });
    const reading = await bound.check();
    expect(reading.uncertaintyMs).toBe(10);
    expect(bound.isWithin()).toBe(false);
  });

  it('gives up its verdict after checks fail in a row, and takes the connection it times on before timing', async () => {
    const { probe, now } = fakeProbe(() => 1);
    let failing = false;
    const taken: string[] = [];
    const flaky: ClockProbe = {
      referenceMs: () => (failing ? Promise.reject(new Error('PostgreSQL unreachable')) : probe.referenceMs()),
      clickhouseMs: () => probe.clickhouseMs(),
      prepare: async () => {
        taken.push('take');
        return () => void taken.push('release');
      },
    };
    const { lines, log } = logs();
    const bound = new ClockBound(flaky, { maxOffsetMs: 10, log, now, failuresToUnknown: 2 });
    await bound.refresh();
    expect(bound.isWithin()).toBe(true);
    failing = true;
    await bound.refresh();
    expect(bound.isWithin()).toBe(true);
    await bound.refresh();
    expect(bound.isWithin()).toBe(false);
    expect(() => bound.assertWithin()).toThrow(/2 checks failed in a row/);
    expect(lines.filter((l) => l.startsWith('error'))).toHaveLength(2);
    expect(taken).toEqual(['take', 'release', 'take', 'release', 'take', 'release']);
  });
});

describe('clockBoundClient', () => {
  /** A client whose calls take `ms` and are recorded with when they were sent. */
  function fakeClient(ms = 0) {
    const sent: Array<{ call: string; query: string; at: number }> = [];
    const run = (call: string) => async (params: { query: string }) => {
      sent.push({ call, query: params.query, at: performance.now() });
      await new Promise((resolve) => setTimeout(resolve, ms));
      return { json: async () => [] };
    };
    return { sent, client: { command: run('command'), query: run('query'), insert: run('insert'), close: async () => 'closed' } };
  }

  it('starts a statement that reads the clock at least the gap after the last write returned; other statements at once', async () => {
    const { sent, client } = fakeClient();
    const within = { assertWithin: () => undefined, isWithin: () => true };
    const spaced = clockBoundClient(client, within, 40);
    await spaced.insert({ query: 'INSERT INTO spans FORMAT JSONEachRow' });
    const returned = performance.now();
    await spaced.query({ query: 'SELECT count() FROM spans' });
    await spaced.command({ query: 'INSERT INTO trace_figures SELECT now64(6)' });
    expect(sent.map((s) => s.call)).toEqual(['insert', 'query', 'command']);
    expect(sent[1]!.at - returned).toBeLessThan(30);
    expect(sent[2]!.at - returned).toBeGreaterThanOrEqual(39);
    // A statement issued long after the last write does not wait.
    await new Promise((resolve) => setTimeout(resolve, 50));
    const issued = performance.now();
    await spaced.query({ query: 'SELECT now()' });
    expect(sent[3]!.at - issued).toBeLessThan(30);
    expect(await spaced.close()).toBe('closed');
  });

  it('refuses every write and every statement that reads the clock while the server is not within the bound, and sends the others', async () => {
    const { sent, client } = fakeClient();
    const beyond = {
      assertWithin: () => {
        throw new ClockOffsetError('off');
      },
      isWithin: () => false,
    };
    const guarded = clockBoundClient(client, beyond, 0);
    await expect(guarded.command({ query: 'INSERT INTO cost_minute SELECT now64(6)' })).rejects.toThrow(ClockOffsetError);
    // spans.ingested_at is a DEFAULT now64(3): the insert stamps though its text does not say so.
    await expect(guarded.insert({ query: 'INSERT INTO spans FORMAT JSONEachRow' })).rejects.toThrow(ClockOffsetError);
    await expect(guarded.query({ query: 'SELECT now64(6)' })).rejects.toThrow(ClockOffsetError);
    await guarded.query({ query: 'SELECT * FROM traces' });
    expect(sent.map((s) => s.query)).toEqual(['SELECT * FROM traces']);
    expect(clockBoundOf(guarded)?.isWithin()).toBe(false);
    expect(clockBoundOf(client)).toBeUndefined();
  });

  it('spaces after a write that failed as after one that returned (it may have been stored all the same)', async () => {
    const { sent, client } = fakeClient();
    const failing = {
      ...client,
      insert: async (_params: { query: string }) => {
        throw new Error('socket hang up');
      },
    };
    const spaced = clockBoundClient(failing, { assertWithin: () => undefined, isWithin: () => true }, 40);
    await expect(spaced.insert({ query: 'INSERT INTO spans FORMAT JSONEachRow' })).rejects.toThrow('socket hang up');
    const failed = performance.now();
    await spaced.command({ query: 'INSERT INTO trace_figures SELECT now64(6)' });
    expect(sent[0]!.at - failed).toBeGreaterThanOrEqual(39);
  });
});
