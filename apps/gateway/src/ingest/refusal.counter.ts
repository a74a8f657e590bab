import { randomUUID } from 'node:crypto';
import type { AccountingEntry, AccountingJob, AccountingOutcome } from '@spanforge/queue';

/** Bound on distinct (project, minute, outcome, reason) keys held while the queue is away. */
const MAX_KEYS = 20_000;

/**
 * Counts, per project and minute, what the gateway decided without producing an export job
 * (rate-limited, refused, all-rejected exports). Flushed as one accounting job with a unique batch
 * id, so a retried job is not counted twice. If the queue cannot take a flush, the counts stay and
 * go with the next one.
 */
export class RefusalCounter {
  private entries = new Map<string, AccountingEntry>();

  count(
    tenantId: string,
    projectId: string,
    outcome: AccountingOutcome,
    reason: string,
    spans: number,
    bytes: number,
    at = Date.now(),
  ): void {
    const minute = Math.floor(at / 60_000) * 60_000;
    const key = `${projectId}|${minute}|${outcome}|${reason}`;
    let entry = this.entries.get(key);
    if (!entry) {
      if (this.entries.size >= MAX_KEYS) return;
      entry = { tenantId, projectId, minute, outcome, reason, requests: 0, spans: 0, bytes: 0 };
      this.entries.set(key, entry);
    }
    entry.requests += 1;
    entry.spans += spans;
    entry.bytes += bytes;
  }

  get size(): number {
    return this.entries.size;
  }

  /** Hands the counts to `send`; they are forgotten only once it resolves. */
  async flush(send: (job: AccountingJob) => Promise<void>): Promise<void> {
    if (this.entries.size === 0) return;
    const taken = this.entries;
    this.entries = new Map();
    try {
      await send({ v: 1, batchId: randomUUID(), entries: [...taken.values()] });
    } catch (error) {
      for (const [key, entry] of taken) {
        const newer = this.entries.get(key);
        if (newer) {
          newer.requests += entry.requests;
          newer.spans += entry.spans;
          newer.bytes += entry.bytes;
        } else this.entries.set(key, entry);
      }
      throw error;
    }
  }
}
