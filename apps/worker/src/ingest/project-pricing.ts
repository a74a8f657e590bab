import type { PriceOverride } from '@spanforge/pricing';
import { toPriceOverride, type TenancyRepository } from '@spanforge/tenancy';

/** A project's overrides change rarely; a change reaches every worker within this time. */
const TTL_MS = 60_000;

/** Each project's price overrides from PostgreSQL, cached; the price table itself lives with the row builder. */
export class ProjectPricing {
  private readonly cache = new Map<string, { overrides: PriceOverride[]; expiresAt: number }>();

  constructor(private readonly repository: TenancyRepository) {}

  async overridesFor(projectId: string): Promise<PriceOverride[]> {
    const now = Date.now();
    const cached = this.cache.get(projectId);
    if (cached && cached.expiresAt > now) return cached.overrides;
    const overrides = (await this.repository.priceOverrides(projectId)).map(toPriceOverride);
    this.cache.set(projectId, { overrides, expiresAt: now + TTL_MS });
    return overrides;
  }
}
