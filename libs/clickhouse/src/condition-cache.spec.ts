import type { ClickHouseClient } from '@clickhouse/client';
import { emptyConditionCacheEvery } from './condition-cache';

/** A client whose `command` is the test's; nothing else of it is used. */
function clientWith(command: (params: { query: string }) => Promise<unknown>): ClickHouseClient {
  return { command } as unknown as ClickHouseClient;
}

function recordingLog() {
  const lines: string[] = [];
  return { lines, log: { info: (m: string) => lines.push(`info ${m}`), warn: (m: string) => lines.push(`warn ${m}`) } };
}

describe('emptyConditionCacheEvery', () => {
  beforeEach(() => jest.useFakeTimers());
  afterEach(() => jest.useRealTimers());

  it('empties the cache once per interval, and never once stopped', async () => {
    const queries: string[] = [];
    const { log, lines } = recordingLog();
    const emptying = emptyConditionCacheEvery(
      clientWith(async ({ query }) => queries.push(query)),
      60,
      log,
    );
    await jest.advanceTimersByTimeAsync(59_000);
    expect(queries).toEqual([]);
    await jest.advanceTimersByTimeAsync(1_000);
    expect(queries).toEqual(['SYSTEM DROP QUERY CONDITION CACHE']);
    await jest.advanceTimersByTimeAsync(120_000);
    expect(queries).toHaveLength(3);
    emptying.stop();
    await emptying.idle();
    await jest.advanceTimersByTimeAsync(600_000);
    expect(queries).toHaveLength(3);
    expect(lines).toEqual([
      "info empties the engine's query condition cache every 60 s (CLICKHOUSE_CONDITION_CACHE_DROP_SECONDS; 0: never)",
    ]);
  });

  it('says why an emptying failed, and tries again at the next interval', async () => {
    let calls = 0;
    const { log, lines } = recordingLog();
    const emptying = emptyConditionCacheEvery(
      clientWith(async () => {
        calls++;
        if (calls === 1) throw new Error('Code: 241. DB::Exception: Memory limit exceeded');
      }),
      30,
      log,
    );
    await jest.advanceTimersByTimeAsync(30_000);
    expect(lines.at(-1)).toBe(
      "warn emptying the engine's query condition cache failed (tried again in 30 s): Code: 241. DB::Exception: Memory limit exceeded",
    );
    await jest.advanceTimersByTimeAsync(30_000);
    expect(calls).toBe(2);
    expect(lines.filter((line) => line.startsWith('warn'))).toHaveLength(1);
    emptying.stop();
  });

  it('goes on after a client that throws at once, without a promise', async () => {
    let calls = 0;
    const { log, lines } = recordingLog();
    const emptying = emptyConditionCacheEvery(
      clientWith(() => {
        calls++;
        throw new Error('closed');
      }),
      10,
      log,
    );
    await jest.advanceTimersByTimeAsync(30_000);
    expect(calls).toBe(3);
    expect(lines.filter((line) => line.startsWith('warn'))).toHaveLength(3);
    emptying.stop();
  });

  it('sends no second emptying while one waits for the engine; once stopped, idle waits for that one', async () => {
    let calls = 0;
    let finish: () => void = () => {};
    const { log } = recordingLog();
    const emptying = emptyConditionCacheEvery(
      clientWith(() => {
        calls++;
        return new Promise<void>((resolve) => (finish = resolve));
      }),
      10,
      log,
    );
    await jest.advanceTimersByTimeAsync(35_000);
    expect(calls).toBe(1);
    emptying.stop();
    let idle = false;
    const waiting = emptying.idle().then(() => (idle = true));
    await jest.advanceTimersByTimeAsync(60_000);
    expect(idle).toBe(false);
    finish();
    await waiting;
    expect(idle).toBe(true);
    expect(calls).toBe(1);
    // Idle again at once once nothing is under way.
    await emptying.idle();
  });

  it('does nothing at 0 s', async () => {
    const { log, lines } = recordingLog();
    const command = jest.fn();
    const emptying = emptyConditionCacheEvery(clientWith(command), 0, log);
    await jest.advanceTimersByTimeAsync(86_400_000);
    expect(command).not.toHaveBeenCalled();
    expect(lines).toEqual([]);
    emptying.stop();
    await emptying.idle();
  });
});
