import path from 'node:path';
import { workerDataDir } from '@spanforge/testing';
import { createClickHouseClient, type ClickHouseClient } from './clickhouse.client';
import { FairScheduler, WORKER_PARTICIPANT, scheduledClient } from './fair-scheduler';

jest.setTimeout(60_000);

/**
 * The embedded engine's express lane, on real chDB: a project's short read runs on a second session
 * beside a long statement of the worker without bound parameters (an insert's kind, or one whose
 * parameters the session writes in), instead of after it, and sees the same tables; beside one with
 * parameters left bound it waits, since chDB runs those one at a time in the process whatever their
 * session.
 */
describe('express lane (embedded chDB)', () => {
  let client: ClickHouseClient;

  beforeAll(async () => {
    client = createClickHouseClient({ kind: 'embedded', path: path.join(workerDataDir(), 'clickhouse') });
    await client.command({ query: 'CREATE TABLE IF NOT EXISTS express_lane_probe (id String) ENGINE = MergeTree ORDER BY id' });
  });
  afterAll(async () => {
    await client.command({ query: 'DROP TABLE IF EXISTS express_lane_probe' });
    await client.close();
  });

  /** The worker holds the engine with a 2 s statement; project P reads meanwhile. Returns what finished first. */
  async function readDuringLongStatement(
    scheduler: FairScheduler,
    long: { query: string; query_params?: Record<string, unknown> } = { query: 'SELECT sleep(2) AS slept' },
  ): Promise<{ order: string[]; read: string[] }> {
    scheduler.keepOffExpress(WORKER_PARTICIPANT);
    const worker = scheduledClient(client, scheduler, WORKER_PARTICIPANT);
    const project = scheduledClient(client, scheduler, 'P');
    const id = `row-${Math.random().toString(36).slice(2)}`;
    await worker.insert({ table: 'express_lane_probe', values: [{ id }], format: 'JSONEachRow' });
    const read = () =>
      project.query({ query: 'SELECT id FROM express_lane_probe WHERE id = {id:String}', query_params: { id }, format: 'JSONEachRow' });
    // P's read once alone: the express lane takes a statement whose recent runs it knows to be short
    // (under 1 s here: on a busy machine the first read can take longer than a dashboard's would).
    await (await read()).json();
    const order: string[] = [];
    const running = worker
      .query({ ...long, format: 'JSONEachRow' })
      .then((result) => result.json())
      .then(() => order.push('worker'));
    await new Promise((resolve) => setTimeout(resolve, 300));
    const result = await read();
    const rows = (await result.json<{ id: string }>()).map((row) => row.id);
    order.push('project');
    await running;
    expect(rows).toEqual([id]);
    return { order, read: rows };
  }

  it("answers a project's read before the worker's long statement ends, with the worker's rows", async () => {
    const { order } = await readDuringLongStatement(new FairScheduler(1, { slots: 1, lightStatementMs: 1_000 }));
    expect(order).toEqual(['project', 'worker']);
  });

  it('without the express lane, the read waits for the statement in progress', async () => {
    const { order } = await readDuringLongStatement(new FairScheduler(1));
    expect(order).toEqual(['worker', 'project']);
  });

  it('runs beside a statement whose parameters the session writes into it', async () => {
    const scheduler = new FairScheduler(1, { slots: 1, lightStatementMs: 1_000 });
    const { order } = await readDuringLongStatement(scheduler, {
      query: 'SELECT sleep({seconds:Float64}) AS slept',
      query_params: { seconds: 2 },
    });
    expect(order).toEqual(['project', 'worker']);
  });

  it('waits beside a statement with parameters left bound (chDB runs those one at a time)', async () => {
    const scheduler = new FairScheduler(1, { slots: 1, lightStatementMs: 1_000 });
    // Bool is not a type written in: the statement is bound for chDB.
    const { order } = await readDuringLongStatement(scheduler, {
      query: 'SELECT sleep(2) AS slept, {flag:Bool} AS flag',
      query_params: { flag: true },
    });
    expect(order).toEqual(['worker', 'project']);
  });

  it('runs the shared lane at the lowest CPU priority, the express lane at the usual one', async () => {
    const scheduler = new FairScheduler(1, { slots: 1, lightStatementMs: 1_000 });
    scheduler.keepOffExpress(WORKER_PARTICIPANT);
    const settingsOf = async (participant: string) => {
      const result = await scheduledClient(client, scheduler, participant).query({
        query: "SELECT getSetting('os_thread_priority') AS priority",
        format: 'JSONEachRow',
      });
      return (await result.json<{ priority: number }>())[0]!.priority;
    };
    await settingsOf('P');
    const long = scheduledClient(client, scheduler, WORKER_PARTICIPANT).query({ query: 'SELECT sleep(1)', format: 'JSONEachRow' });
    await new Promise((resolve) => setTimeout(resolve, 200));
    const express = await settingsOf('P');
    await long;
    const shared = await settingsOf(WORKER_PARTICIPANT);
    expect(shared).toBe(19);
    expect(express).toBe(0);
  });
});
