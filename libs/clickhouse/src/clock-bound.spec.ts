import { ClockBound, ClockOffsetError, clockBoundClient, readClockOffset, type ClockProbe } from './clock-bound';

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
  it('refuses while the server is beyond half the bound, says so once, and lets go once it is back', async () => {
    let offset = 3;
    const { probe, now } = fakeProbe(() => offset);
    const { lines, log } = logs();
    const bound = new ClockBound(probe, { maxOffsetMs: 10, log, now });

    await bound.check();
    expect(() => bound.assertWithin()).not.toThrow();

    offset = 40;
    await bound.check();
    await bound.check();
    expect(() => bound.assertWithin()).toThrow(ClockOffsetError);
    expect(() => bound.assertWithin()).toThrow(/40\.0 ms .* beyond ±5 ms/);
    expect(lines.filter((l) => l.startsWith('error'))).toHaveLength(1);

    offset = -2;
    await bound.check();
    expect(() => bound.assertWithin()).not.toThrow();
    expect(lines.at(-1)).toMatch(/^info .*back within/);
  });

  it('does not refuse an offset its uncertainty could explain (slow round trips)', async () => {
    const { probe, now } = fakeProbe(() => 9, 10);
    const bound = new ClockBound(probe, { maxOffsetMs: 10, log: logs().log, now });
    const reading = await bound.check();
    expect(reading.uncertaintyMs).toBeGreaterThan(4);
    expect(() => bound.assertWithin()).not.toThrow();
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
    const within = { assertWithin: () => undefined };
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

  it('refuses a statement that reads the clock while the server is beyond the bound, and sends the others', async () => {
    const { sent, client } = fakeClient();
    const beyond = {
      assertWithin: () => {
        throw new ClockOffsetError('off');
      },
    };
    const guarded = clockBoundClient(client, beyond, 0);
    await expect(guarded.command({ query: 'INSERT INTO cost_minute SELECT now64(6)' })).rejects.toThrow(ClockOffsetError);
    await guarded.query({ query: 'SELECT * FROM traces' });
    expect(sent.map((s) => s.query)).toEqual(['SELECT * FROM traces']);
  });
});
