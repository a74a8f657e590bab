import { AnalyticsRepository } from './analytics.repository';
import { LAST_STORABLE_MS } from './query.values';
import type { ScopedClickHouse } from './scoped-clickhouse';

/** Which read costBreakdown makes for a filter, and with which bounds (the SQL itself runs in the query integration tests). */
function costBreakdownRead(
  filter: Record<string, unknown> | undefined,
  keptSince?: number,
): Promise<{ name: string; params: Record<string, unknown> }> {
  return new Promise((resolve, reject) => {
    const db = {
      keptSinceMs: async () => keptSince,
      rows: async (name: string, _sql: string, params: Record<string, unknown> = {}) => {
        resolve({ name, params });
        return [];
      },
    } as unknown as ScopedClickHouse;
    new AnalyticsRepository(db).costBreakdown(['MODEL', 'DAY'], filter as never).catch(reject);
  });
}

const DAY = 86_400_000;
const midnight = Date.UTC(2026, 10, 20);
const iso = (ms: number) => new Date(ms).toISOString();

describe('costBreakdown: day-keyed reads where they fit', () => {
  it('reads whole days only from the daily rows', async () => {
    expect(await costBreakdownRead({ from: iso(midnight), to: iso(midnight + 3 * DAY) })).toEqual({
      name: 'query.cost_breakdown_daily',
      params: { firstDayMs: midnight, endDayMs: midnight + 3 * DAY },
    });
    expect(await costBreakdownRead(undefined)).toEqual({ name: 'query.cost_breakdown_daily', params: {} });
  });

  it('adds the part day at whichever end is not midnight, each read for its own day', async () => {
    const from = midnight + 5.5 * 3_600_000;
    const to = midnight + 3 * DAY + 3_600_000;
    expect(await costBreakdownRead({ from: iso(from), to: iso(to) })).toEqual({
      name: 'query.cost_breakdown_daily_and_part_days',
      params: {
        firstDayMs: midnight + DAY,
        endDayMs: midnight + 3 * DAY,
        part0FirstMinute: from,
        part0EndMinute: midnight + DAY,
        part1FirstMinute: midnight + 3 * DAY,
        part1EndMinute: to,
      },
    });
    expect(await costBreakdownRead({ from: iso(from) })).toEqual({
      name: 'query.cost_breakdown_daily_and_part_days',
      params: { firstDayMs: midnight + DAY, part0FirstMinute: from, part0EndMinute: midnight + DAY },
    });
    expect(await costBreakdownRead({ to: iso(to) })).toEqual({
      name: 'query.cost_breakdown_daily_and_part_days',
      params: { endDayMs: midnight + 3 * DAY, part0FirstMinute: midnight + 3 * DAY, part0EndMinute: to },
    });
  });

  it('reads only part days when the range holds no whole day', async () => {
    const hour = 3_600_000;
    expect(await costBreakdownRead({ from: iso(midnight + hour), to: iso(midnight + 2 * hour) })).toEqual({
      name: 'query.cost_breakdown_part_days',
      params: { part0FirstMinute: midnight + hour, part0EndMinute: midnight + 2 * hour },
    });
    expect(await costBreakdownRead({ from: iso(midnight + 3 * hour), to: iso(midnight + DAY + 5 * hour) })).toEqual({
      name: 'query.cost_breakdown_part_days',
      params: {
        part0FirstMinute: midnight + 3 * hour,
        part0EndMinute: midnight + DAY,
        part1FirstMinute: midnight + DAY,
        part1EndMinute: midnight + DAY + 5 * hour,
      },
    });
    expect(await costBreakdownRead({ from: iso(midnight), to: iso(midnight + 5 * hour) })).toEqual({
      name: 'query.cost_breakdown_part_days',
      params: { part0FirstMinute: midnight, part0EndMinute: midnight + 5 * hour },
    });
  });

  it('reads the part minutes at the ends of a part day from the traces filed under them', async () => {
    const hour = 3_600_000;
    const from = midnight + hour + 30_000;
    const to = midnight + 2 * hour + 15_000;
    expect(await costBreakdownRead({ from: iso(from), to: iso(to) })).toEqual({
      name: 'query.cost_breakdown_part_days',
      params: {
        part0FirstMinute: midnight + hour + 60_000,
        part0EndMinute: midnight + 2 * hour,
        part0Minute0From: from,
        part0Minute0To: midnight + hour + 60_000,
        part0Minute1From: midnight + 2 * hour,
        part0Minute1To: to,
      },
    });
    // Within one minute: that part minute alone.
    expect((await costBreakdownRead({ from: iso(midnight + 10_000), to: iso(midnight + 20_000) })).params).toEqual({
      part0Minute0From: midnight + 10_000,
      part0Minute0To: midnight + 20_000,
    });
  });

  it("starts the range where the project's retention does, its first day a part day", async () => {
    const since = midnight + 7 * 3_600_000;
    expect(await costBreakdownRead({ from: iso(midnight - 10 * DAY), to: iso(midnight + 3 * DAY) }, since)).toEqual({
      name: 'query.cost_breakdown_daily_and_part_days',
      params: { firstDayMs: midnight + DAY, endDayMs: midnight + 3 * DAY, part0FirstMinute: since, part0EndMinute: midnight + DAY },
    });
    expect(await costBreakdownRead(undefined, since)).toEqual({
      name: 'query.cost_breakdown_daily_and_part_days',
      params: { firstDayMs: midnight + DAY, part0FirstMinute: since, part0EndMinute: midnight + DAY },
    });
    // A range that starts within what is kept is left alone.
    expect((await costBreakdownRead({ from: iso(midnight + DAY), to: iso(midnight + 3 * DAY) }, since)).params).toEqual({
      firstDayMs: midnight + DAY,
      endDayMs: midnight + 3 * DAY,
    });
  });

  it('takes the per-trace rows when there is any other filter', async () => {
    expect((await costBreakdownRead({ from: iso(midnight), to: iso(midnight + DAY), minIterations: 0 })).name).toBe('query.cost_breakdown');
    expect(
      (await costBreakdownRead({ from: iso(midnight + 3_600_000), to: iso(midnight + 2 * 3_600_000), model: 'gpt-4o-mini' })).name,
    ).toBe('query.cost_breakdown');
  });

  it('refuses a range that ends before it starts', async () => {
    await expect(costBreakdownRead({ from: iso(midnight + DAY), to: iso(midnight) })).rejects.toMatchObject({
      message: 'filter.from must be before filter.to',
    });
  });

  it('keeps far-off bounds inside the days ClickHouse can hold, so no day bound wraps around', async () => {
    const read = await costBreakdownRead({ from: '1900-01-01T00:00:00Z', to: '2999-12-31T12:00:00Z' });
    expect(read).toEqual({ name: 'query.cost_breakdown_daily', params: { firstDayMs: 0, endDayMs: LAST_STORABLE_MS } });
  });
});
