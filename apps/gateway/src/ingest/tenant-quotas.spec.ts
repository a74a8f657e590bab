import { QUOTA_RETRY_AFTER_S, TenantQuotas, monthBounds, type QuotaSources } from './tenant-quotas';

/** Sources whose answers the test sets, recording the usage reads. */
function sources(quotas: Map<string, number>, accepted: Map<string, number>) {
  const reads: Array<{ tenantIds: readonly string[]; fromMs: number; toMs?: number }> = [];
  const fake: QuotaSources & { failQuotas: boolean; failUsage: boolean } = {
    failQuotas: false,
    failUsage: false,
    async quotas() {
      if (fake.failQuotas) throw new Error('PostgreSQL away');
      return new Map(quotas);
    },
    async acceptedSpans(tenantIds, fromMs, toMs) {
      if (fake.failUsage) throw new Error('ClickHouse away');
      reads.push({ tenantIds, fromMs, toMs });
      // The test's figures are whole months: all in the recent part, none before it.
      return toMs === undefined ? new Map([...accepted].filter(([id]) => tenantIds.includes(id))) : new Map();
    },
  };
  return { fake, reads };
}

describe('TenantQuotas', () => {
  let now = Date.UTC(2026, 11, 15, 12, 30);
  const clock = () => now;
  const warnings: string[] = [];
  const log = { warn: (message: string) => warnings.push(message) };

  beforeEach(() => {
    now = Date.UTC(2026, 11, 15, 12, 30);
    warnings.length = 0;
  });

  it('admits a tenant without a quota, and one under it; refuses from the export after the one that crosses it', async () => {
    const { fake } = sources(new Map([['t1', 100]]), new Map([['t1', 90]]));
    const quotas = new TenantQuotas(fake, log, undefined, clock);
    await quotas.refresh();

    expect(quotas.check('t2').retryAfterSeconds).toBe(0);
    expect(quotas.check('t1').retryAfterSeconds).toBe(0);
    quotas.record('t1', 25); // 115: crossed, taken whole
    expect(quotas.check('t1')).toEqual({ retryAfterSeconds: QUOTA_RETRY_AFTER_S, limit: 100 });
  });

  it('keeps what this gateway queued while a read lags the accounting, and never lowers the month', async () => {
    const accepted = new Map([['t1', 50]]);
    const { fake } = sources(new Map([['t1', 100]]), accepted);
    const quotas = new TenantQuotas(fake, log, undefined, clock);
    await quotas.refresh();
    quotas.record('t1', 60); // 110 known here; the accounting still says 50
    await quotas.refresh();
    expect(quotas.check('t1').retryAfterSeconds).toBeGreaterThan(0);
    accepted.set('t1', 300); // other gateways' exports
    await quotas.refresh();
    expect(quotas.check('t1').limit).toBe(100);
  });

  it('applies a raised or removed quota at the next refresh', async () => {
    const limits = new Map([['t1', 10]]);
    const { fake } = sources(limits, new Map([['t1', 10]]));
    const quotas = new TenantQuotas(fake, log, undefined, clock);
    await quotas.refresh();
    expect(quotas.check('t1').retryAfterSeconds).toBeGreaterThan(0);
    limits.set('t1', 11);
    await quotas.refresh();
    expect(quotas.check('t1').retryAfterSeconds).toBe(0);
    limits.set('t1', 5);
    await quotas.refresh();
    expect(quotas.check('t1').retryAfterSeconds).toBeGreaterThan(0);
    limits.delete('t1');
    await quotas.refresh();
    expect(quotas.check('t1').retryAfterSeconds).toBe(0);
  });

  it('starts a new month at 00:00 UTC on the first without waiting for a read; Retry-After never past it', async () => {
    const { fake } = sources(new Map([['t1', 10]]), new Map([['t1', 10]]));
    const quotas = new TenantQuotas(fake, log, undefined, clock);
    now = Date.UTC(2026, 11, 31, 23, 59, 50);
    await quotas.refresh();
    expect(quotas.check('t1').retryAfterSeconds).toBe(10);
    now = Date.UTC(2027, 0, 1, 0, 0, 0);
    expect(quotas.check('t1').retryAfterSeconds).toBe(0);
  });

  it('reads the month before the previous hour once per hour, the rest at every refresh', async () => {
    const { fake, reads } = sources(new Map([['t1', 10]]), new Map());
    const quotas = new TenantQuotas(fake, log, undefined, clock);
    await quotas.refresh();
    await quotas.refresh();
    const baseEnd = Date.UTC(2026, 11, 15, 11);
    expect(reads).toEqual([
      { tenantIds: ['t1'], fromMs: monthBounds(now).start, toMs: baseEnd },
      { tenantIds: ['t1'], fromMs: baseEnd, toMs: undefined },
      { tenantIds: ['t1'], fromMs: baseEnd, toMs: undefined },
    ]);
  });

  it('keeps the last known quotas and figures when a read fails, and says so', async () => {
    const { fake } = sources(new Map([['t1', 10]]), new Map([['t1', 10]]));
    const results: string[] = [];
    const quotas = new TenantQuotas(fake, log, (result) => results.push(result), clock);
    await quotas.refresh();
    fake.failQuotas = true;
    fake.failUsage = true;
    await quotas.refresh();
    expect(quotas.check('t1').retryAfterSeconds).toBeGreaterThan(0);
    expect(results).toEqual(['ok', 'failed']);
    expect(warnings).toEqual([expect.stringContaining('PostgreSQL away'), expect.stringContaining('ClickHouse away')]);
  });
});
