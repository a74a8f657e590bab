import { PriceTable, priceSpan } from '@spanforge/pricing';
import type { NormalizedSpan } from '@spanforge/semconv';
import type { PriceOverrideRow, TenancyRepository } from '@spanforge/tenancy';
import type { SpanPrice } from '@spanforge/ingest';

/** A project's overrides change rarely; a change reaches every worker within this time. */
const TTL_MS = 60_000;
const NO_PRICE: SpanPrice = { costUsd: 0, costSource: '', priceVersion: '' };

export interface ProjectPriceList {
  price(span: NormalizedSpan, startTimeUnixNano: bigint): SpanPrice;
}

/** The bundled price table with each project's overrides from PostgreSQL, cached per project. */
export class ProjectPricing {
  private readonly bundled = PriceTable.bundled();
  private readonly cache = new Map<string, { list: ProjectPriceList; expiresAt: number }>();

  constructor(private readonly repository: TenancyRepository) {}

  async forProject(projectId: string): Promise<ProjectPriceList> {
    const now = Date.now();
    const cached = this.cache.get(projectId);
    if (cached && cached.expiresAt > now) return cached.list;
    const rows = await this.repository.priceOverrides(projectId);
    const table = rows.length === 0 ? this.bundled : this.bundled.withOverrides(rows.map(toOverride));
    const list: ProjectPriceList = {
      price: (span, startTimeUnixNano) => {
        const { usage } = span;
        const tokens = usage.inputUncached + usage.cacheRead + usage.cacheWrite + usage.output + usage.reasoning;
        // Spans without usage or a stated cost have nothing to price (and are not "unpriced models").
        if (tokens === 0 && span.explicitCostUsd === undefined) return NO_PRICE;
        return priceSpan({ pricingModel: span.pricingModel, provider: span.provider, usage, explicitCostUsd: span.explicitCostUsd, startTime: startTimeUnixNano }, table);
      },
    };
    this.cache.set(projectId, { list, expiresAt: now + TTL_MS });
    return list;
  }
}

function toOverride(row: PriceOverrideRow) {
  return {
    id: row.id,
    model: row.model,
    inputPerMTok: row.input_per_mtok,
    outputPerMTok: row.output_per_mtok,
    cacheReadPerMTok: row.cache_read_per_mtok,
    cacheWritePerMTok: row.cache_write_per_mtok,
    effectiveFrom: row.effective_from,
  };
}
