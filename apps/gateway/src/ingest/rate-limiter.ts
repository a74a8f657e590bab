/** Per-project ingest limits; undefined fields fall back to the gateway defaults. */
export interface IngestLimits {
  spansPerSecond: number;
  bytesPerSecond: number;
}

interface Bucket {
  tokens: number;
  updatedAt: number;
}

/** Burst allowance: a bucket holds this many seconds of its rate. */
const BURST_SECONDS = 2;

/**
 * Token buckets per project on spans/s and bytes/s, in this gateway process. With N gateways
 * behind a balancer a project gets up to N× its limit; the limits are a guard rail, not billing.
 */
export class IngestRateLimiter {
  private readonly spans = new Map<string, Bucket>();
  private readonly bytes = new Map<string, Bucket>();

  constructor(private readonly now: () => number = () => performance.now()) {}

  /**
   * Takes both costs or neither. Returns 0 when admitted, else the seconds to wait before the
   * same request would fit (for Retry-After), at least 1.
   */
  take(projectId: string, spans: number, bytes: number, limits: IngestLimits): number {
    const now = this.now();
    const spanBucket = this.refill(this.spans, projectId, limits.spansPerSecond, now);
    const byteBucket = this.refill(this.bytes, projectId, limits.bytesPerSecond, now);
    const spanWait = deficitSeconds(spanBucket.tokens, spans, limits.spansPerSecond);
    const byteWait = deficitSeconds(byteBucket.tokens, bytes, limits.bytesPerSecond);
    if (spanWait > 0 || byteWait > 0) return Math.max(1, Math.ceil(Math.max(spanWait, byteWait)));
    spanBucket.tokens -= spans;
    byteBucket.tokens -= bytes;
    return 0;
  }

  /**
   * Before decoding: seconds until this body could be taken (the bytes, and at least one span),
   * 0 when it may go on to be decoded and `take`n. Takes nothing.
   */
  precheck(projectId: string, bytes: number, limits: IngestLimits): number {
    const now = this.now();
    const spanWait = deficitSeconds(this.refill(this.spans, projectId, limits.spansPerSecond, now).tokens, 1, limits.spansPerSecond);
    const byteWait = deficitSeconds(this.refill(this.bytes, projectId, limits.bytesPerSecond, now).tokens, bytes, limits.bytesPerSecond);
    return spanWait > 0 || byteWait > 0 ? Math.max(1, Math.ceil(Math.max(spanWait, byteWait))) : 0;
  }

  private refill(buckets: Map<string, Bucket>, key: string, rate: number, now: number): Bucket {
    const capacity = rate * BURST_SECONDS;
    let bucket = buckets.get(key);
    if (!bucket) {
      bucket = { tokens: capacity, updatedAt: now };
      buckets.set(key, bucket);
      return bucket;
    }
    bucket.tokens = Math.min(capacity, bucket.tokens + ((now - bucket.updatedAt) / 1000) * rate);
    bucket.updatedAt = now;
    return bucket;
  }
}

/**
 * Seconds until `cost` tokens are available. A request larger than the whole burst could never
 * fit, so it is admitted when the bucket is full and leaves the bucket in debt for its full cost.
 */
function deficitSeconds(tokens: number, cost: number, rate: number): number {
  const capacity = rate * BURST_SECONDS;
  const needed = Math.min(cost, capacity);
  return tokens >= needed ? 0 : (needed - tokens) / rate;
}
