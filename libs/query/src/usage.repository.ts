import { badInput } from '@spanforge/errors';
import type { ScopedClickHouse } from './scoped-clickhouse';
import { autoGranularity } from './metrics-buckets';
import { parseInstant } from './query.values';

/**
 * Bucket size of usage, in UTC (the `metrics` query's granularities; AUTO picks one of them), or
 * WHOLE: one bucket for the whole range (a calendar month's usage: the month's first instant to the
 * next month's).
 */
export type UsageGranularity = 'MINUTE' | 'HOUR' | 'DAY' | 'WEEK' | 'WHOLE';

/** The most buckets a usage read may span: 83 days of hours, 5 years of days. */
export const USAGE_MAX_BUCKETS = 2_000;

const BUCKET_MS: Record<Exclude<UsageGranularity, 'WHOLE'>, number> = {
  MINUTE: 60_000,
  HOUR: 3_600_000,
  DAY: 86_400_000,
  WEEK: 7 * 86_400_000,
};

/** The start of a bucket, as a UTC DateTime of the accounting minute. */
const BUCKET_SQL: Record<UsageGranularity, string> = {
  MINUTE: 'minute',
  HOUR: 'toStartOfHour(minute)',
  DAY: 'toStartOfDay(minute)',
  WEEK: "toDateTime(toMonday(minute), 'UTC')",
  WHOLE: "toDateTime(intDiv({fromMs:Int64}, 1000), 'UTC')",
};

/** One bucket of one project's usage, as ClickHouse answers it. */
export interface UsageBucketRow {
  /** Start of the bucket, seconds since the epoch. */
  bucket_s: number;
  spans_accepted: number;
  spans_rejected: number;
  spans_refused: number;
  bytes_accepted: number;
}

/** A usage range checked: milliseconds since the epoch, from inclusive, to exclusive. */
export interface UsageRange {
  fromMs: number;
  toMs: number;
  granularity: UsageGranularity;
}

/** from/to/granularity from a caller, checked: from before to, at most USAGE_MAX_BUCKETS buckets; absent granularity: WHOLE. */
export function usageRange(from: string | Date, to: string | Date, asked: UsageGranularity | 'AUTO' | null = 'WHOLE'): UsageRange {
  const fromMs = parseInstant(from, 'from')!;
  const toMs = parseInstant(to, 'to')!;
  if (!(fromMs < toMs)) throw badInput('from must be before to');
  const granularity: UsageGranularity = asked === 'AUTO' ? autoGranularity(fromMs, toMs) : (asked ?? 'WHOLE');
  if (granularity !== 'WHOLE' && (toMs - fromMs) / BUCKET_MS[granularity] > USAGE_MAX_BUCKETS)
    throw badInput(
      `the range holds more than ${USAGE_MAX_BUCKETS} ${granularity.toLowerCase()} buckets: choose a coarser granularity or a shorter range`,
    );
  return { fromMs, toMs, granularity };
}

/**
 * A project's usage from the ingest accounting (infra/clickhouse/003): what the gateways and
 * workers decided about its exports, per UTC bucket of the minute the gateway took them.
 *
 * - accepted: spans stored (the worker's `accepted` rows);
 * - rejected: invalid spans of exports that were answered 200 (`rejected`, by any reason);
 * - refused: spans of exports the gateway refused whole (`rate_limited`: rate, queue share;
 *   `refused`: queue full or away, tenant quota; an export refused before its body was decoded counts
 *   its bytes, not its spans, so it adds nothing here);
 * - bytes accepted: the size (after decompression) of the exports answered 200 (`received` rows).
 *
 * Placeholders dropped by the worker (`dropped`, Logfire pending spans) are none of these.
 */
export class UsageRepository {
  constructor(private readonly db: ScopedClickHouse) {}

  async usage(range: UsageRange): Promise<UsageBucketRow[]> {
    return this.db.rows<UsageBucketRow>(
      'query.usage',
      `SELECT toUnixTimestamp(bucket) AS bucket_s,
              sumIf(spans, outcome = 'accepted') AS spans_accepted,
              sumIf(spans, outcome = 'rejected') AS spans_rejected,
              sumIf(spans, outcome IN ('rate_limited', 'refused')) AS spans_refused,
              sumIf(bytes, outcome = 'received') AS bytes_accepted
       FROM (SELECT ${BUCKET_SQL[range.granularity]} AS bucket, outcome, spans, bytes FROM ingest_accounting FINAL
             WHERE tenant_id = {tenantId:String} AND project_id = {projectId:String}
               AND minute >= toStartOfMinute(fromUnixTimestamp64Milli({fromMs:Int64}, 'UTC'))
               AND minute < fromUnixTimestamp64Milli({toMs:Int64}, 'UTC'))
       GROUP BY bucket ORDER BY bucket`,
      { fromMs: range.fromMs, toMs: range.toMs },
    );
  }
}
