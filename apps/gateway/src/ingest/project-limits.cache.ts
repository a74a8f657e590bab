import { DEFAULT_PROJECT_INGEST_LIMITS, type TenancyRepository } from '@spanforge/tenancy';
import type { IngestLimits } from './rate-limiter';

const TTL_MS = 30_000;

/** Project limits from PostgreSQL, cached: a limit change reaches every gateway within 30 s. */
export class ProjectLimitsCache {
  private readonly cache = new Map<string, { limits: IngestLimits; expiresAt: number }>();

  constructor(
    private readonly repository: TenancyRepository,
    private readonly defaults: IngestLimits = DEFAULT_PROJECT_INGEST_LIMITS,
  ) {}

  async get(projectId: string): Promise<IngestLimits> {
    const now = Date.now();
    const cached = this.cache.get(projectId);
    if (cached && cached.expiresAt > now) return cached.limits;
    try {
      const own = await this.repository.ingestLimits(projectId);
      const limits = { spansPerSecond: own?.spansPerSecond ?? this.defaults.spansPerSecond, bytesPerSecond: own?.bytesPerSecond ?? this.defaults.bytesPerSecond };
      this.cache.set(projectId, { limits, expiresAt: now + TTL_MS });
      return limits;
    } catch {
      // PostgreSQL briefly away: keep ingesting under the last known (or default) limits.
      return cached?.limits ?? this.defaults;
    }
  }
}
