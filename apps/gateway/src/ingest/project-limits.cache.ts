import { DEFAULT_PROJECT_INGEST_LIMITS, type TenancyRepository } from '@spanforge/tenancy';
import type { IngestLimits } from './rate-limiter';

const TTL_MS = 30_000;

/** Project limits from PostgreSQL, cached: a limit change reaches every gateway within 30 s. */
/** How long limits read in a PostgreSQL outage are used before asking again. */
const RETRY_AFTER_FAILURE_MS = 5_000;

export class ProjectLimitsCache {
  private readonly cache = new Map<string, { limits: IngestLimits; expiresAt: number }>();

  constructor(
    private readonly repository: TenancyRepository,
    private readonly log: { warn(message: string): void },
    private readonly defaults: IngestLimits = DEFAULT_PROJECT_INGEST_LIMITS,
  ) {}

  async get(projectId: string): Promise<IngestLimits> {
    const now = Date.now();
    const cached = this.cache.get(projectId);
    if (cached && cached.expiresAt > now) return cached.limits;
    try {
      const own = await this.repository.ingestLimits(projectId);
      const limits = {
        spansPerSecond: own?.spansPerSecond ?? this.defaults.spansPerSecond,
        bytesPerSecond: own?.bytesPerSecond ?? this.defaults.bytesPerSecond,
      };
      this.cache.set(projectId, { limits, expiresAt: now + TTL_MS });
      return limits;
    } catch (error) {
      // PostgreSQL briefly away: keep ingesting under the last known (or default) limits.
      // Kept for a few seconds: one line (and one PostgreSQL attempt) per project per interval, not per export.
      const limits = cached?.limits ?? this.defaults;
      this.cache.set(projectId, { limits, expiresAt: now + RETRY_AFTER_FAILURE_MS });
      this.log.warn(
        `project ${projectId}: ingest limits unreadable, using ${cached ? 'the last known' : 'the default'} ones for ${RETRY_AFTER_FAILURE_MS / 1000} s: ${(error as Error).message}`,
      );
      return limits;
    }
  }
}
