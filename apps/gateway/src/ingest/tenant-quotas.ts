/**
 * Tenant quotas in one gateway process: which tenants have a monthly span quota (PostgreSQL) and
 * how many spans each has had accepted this calendar month (UTC), from the ingest accounting
 * (ClickHouse) plus what this gateway queued since its last read. Refreshed every REFRESH_MS; the
 * request path only looks in a map (a tenant without a quota costs one lookup).
 *
 * The month's figure is read in two parts: the accounting before the previous hour once an hour
 * (a month of a busy tenant's rows is many per-export rows), and the rest at every refresh. A
 * refresh never lowers the figure within a month: accepted spans only grow, and a read that
 * lags the worker's accounting must not undo what this gateway counted itself.
 *
 * When a read fails the gateway keeps the last known quotas and figures (and goes on counting
 * its own), logs it, and keeps accepting: a quota must not turn a ClickHouse or PostgreSQL
 * outage into refused exports.
 */

/** How often quotas and usage are read again: a quota change or another gateway's exports count within about this. */
export const QUOTA_REFRESH_MS = 10_000;
/**
 * Retry-After of an export refused over its quota. Short enough that a raised quota (or a new
 * month) is used soon after it applies; long enough that exporters do not hammer the gateway.
 */
export const QUOTA_RETRY_AFTER_S = 30;
/** The part of the month read at every refresh starts this long before the start of the current hour. */
const RECENT_MS = 3_600_000;

export interface QuotaSources {
  /** Every tenant with a quota, with it (PostgreSQL). */
  quotas(): Promise<Map<string, number>>;
  /** Accepted spans per tenant in accounting minutes [fromMs, toMs), toMs undefined: up to now (ClickHouse). */
  acceptedSpans(tenantIds: readonly string[], fromMs: number, toMs?: number): Promise<Map<string, number>>;
}

interface TenantQuota {
  limit: number;
  /** Start of the month `used` counts, and of the next (ms since the epoch, UTC). */
  monthStart: number;
  monthEnd: number;
  /** Accepted spans this month as last known: the accounting read plus this gateway's own since. */
  used: number;
  /** Spans this gateway queued for the tenant, ever (differences of it count what came between two instants). */
  queued: number;
  /** Accepted spans of [monthStart, baseEnd), read once per baseEnd. */
  base?: { end: number; spans: number };
}

/** What the request path asks: 0 to take the export, else the seconds for Retry-After. */
export interface QuotaVerdict {
  retryAfterSeconds: number;
  limit: number;
}

const ADMIT: QuotaVerdict = { retryAfterSeconds: 0, limit: 0 };

export function monthBounds(ms: number): { start: number; end: number } {
  const at = new Date(ms);
  return { start: Date.UTC(at.getUTCFullYear(), at.getUTCMonth(), 1), end: Date.UTC(at.getUTCFullYear(), at.getUTCMonth() + 1, 1) };
}

export class TenantQuotas {
  private readonly tenants = new Map<string, TenantQuota>();
  private timer: NodeJS.Timeout | undefined;
  private refreshing: Promise<void> | undefined;

  constructor(
    private readonly sources: QuotaSources,
    private readonly log: { warn(message: string): void },
    /** Told after every read: 'ok', or 'failed' when quotas or usage could not be read. */
    private readonly refreshed: (result: 'ok' | 'failed') => void = () => undefined,
    private readonly now: () => number = Date.now,
  ) {}

  /** Reads once, then every QUOTA_REFRESH_MS until stop(). */
  start(): void {
    void this.refresh();
    this.timer = setInterval(() => void this.refresh(), QUOTA_REFRESH_MS);
    this.timer.unref();
  }

  stop(): void {
    clearInterval(this.timer);
  }

  /**
   * Whether the tenant may have another export taken: refused once its month's accepted spans
   * reach the quota, so the export that crosses it is taken whole.
   */
  check(tenantId: string): QuotaVerdict {
    const quota = this.tenants.get(tenantId);
    if (quota === undefined) return ADMIT;
    const now = this.now();
    if (now >= quota.monthEnd) this.newMonth(quota, now);
    if (quota.used < quota.limit) return ADMIT;
    const untilNextMonth = Math.ceil((quota.monthEnd - now) / 1000);
    return { retryAfterSeconds: Math.max(1, Math.min(QUOTA_RETRY_AFTER_S, untilNextMonth)), limit: quota.limit };
  }

  /** Spans of the tenant this gateway has just queued. */
  record(tenantId: string, spans: number): void {
    const quota = this.tenants.get(tenantId);
    if (quota === undefined) return;
    quota.queued += spans;
    quota.used += spans;
  }

  /** One read of quotas and usage; a refresh already running is waited for, not doubled. */
  refresh(): Promise<void> {
    this.refreshing ??= this.read().finally(() => (this.refreshing = undefined));
    return this.refreshing;
  }

  private async read(): Promise<void> {
    let ok = true;
    let limits: Map<string, number>;
    try {
      limits = await this.sources.quotas();
    } catch (error) {
      ok = false;
      this.log.warn(`tenant quotas unreadable, the last known ones stay in force: ${(error as Error).message}`);
      limits = new Map([...this.tenants].map(([id, q]) => [id, q.limit]));
    }
    const now = this.now();
    const month = monthBounds(now);
    for (const id of this.tenants.keys()) if (!limits.has(id)) this.tenants.delete(id);
    for (const [id, limit] of limits) {
      const quota = this.tenants.get(id);
      if (quota) quota.limit = limit;
      else this.tenants.set(id, { limit, monthStart: month.start, monthEnd: month.end, used: 0, queued: 0 });
    }
    for (const quota of this.tenants.values()) if (quota.monthStart !== month.start) this.newMonth(quota, now);
    if (this.tenants.size > 0)
      ok = (await this.readUsage(month.start, Math.max(month.start, Math.floor(now / RECENT_MS) * RECENT_MS - RECENT_MS))) && ok;
    this.refreshed(ok ? 'ok' : 'failed');
  }

  /** False when ClickHouse could not be read (the figures stay as they were). */
  private async readUsage(monthStart: number, baseEnd: number): Promise<boolean> {
    const ids = [...this.tenants.keys()];
    const queuedBefore = new Map(ids.map((id) => [id, this.tenants.get(id)!.queued]));
    try {
      const needBase = new Set(ids.filter((id) => this.tenants.get(id)!.base?.end !== baseEnd));
      const [base, recent] = await Promise.all([
        baseEnd > monthStart && needBase.size > 0
          ? this.sources.acceptedSpans([...needBase], monthStart, baseEnd)
          : new Map<string, number>(),
        this.sources.acceptedSpans(ids, baseEnd),
      ]);
      for (const id of ids) {
        const quota = this.tenants.get(id);
        // Gone, or a new month began while reading: the figures read are not this month's.
        if (!quota || quota.monthStart !== monthStart) continue;
        if (needBase.has(id)) quota.base = { end: baseEnd, spans: base.get(id) ?? 0 };
        const since = quota.queued - queuedBefore.get(id)!;
        quota.used = Math.max(quota.used, (quota.base?.spans ?? 0) + (recent.get(id) ?? 0) + since);
      }
      return true;
    } catch (error) {
      this.log.warn(
        `tenant usage unreadable from ClickHouse, quotas held against the last known figures plus this gateway's own exports: ${(error as Error).message}`,
      );
      return false;
    }
  }

  private newMonth(quota: TenantQuota, now: number): void {
    const month = monthBounds(now);
    quota.monthStart = month.start;
    quota.monthEnd = month.end;
    quota.used = 0;
    quota.base = undefined;
  }
}
