import { DomainError, ErrorCode } from '@spanforge/errors';
import { BatchingQueue, type BatchingOptions } from '@spanforge/ingest';
import type { FeedbackRecord, FeedbackScope } from './feedback.model';
import type { FeedbackRepository } from './feedback.repository';

interface Pending {
  scope: FeedbackScope;
  record: FeedbackRecord;
  /** When the request came in (ms): scores of one write keep their order. */
  receivedAt: number;
}

/**
 * Group commit for feedback: the scores of requests that arrive while a write runs go out together
 * as the next write. One write is one insert, then per project one lookup of which traces are
 * stored and one refresh of their sessions' figures. A request's promise settles when the write
 * holding its score is done, so an accepted score is stored and its session's figures show it.
 * (One request at a time, each wrote a part and refreshed its session alone: 12-16 requests/s.)
 */
export class FeedbackWriter {
  private readonly queue: BatchingQueue<Pending>;
  /** Scores added and not yet stored. */
  private waiting = 0;
  private closed = false;

  constructor(
    private readonly repository: Pick<FeedbackRepository, 'insert' | 'storedTraces' | 'refreshSessions'>,
    /** Told once per score accepted for a trace not stored (yet). */
    private readonly onUnknownTrace: () => void,
    options: BatchingOptions = { maxItems: 1_000, maxDelayMs: 0 },
    /** Told when a project's session figures could not be refreshed (its scores are stored). */
    private readonly warn: (message: string) => void = () => undefined,
    /** Scores that may wait at once; beyond, requests are refused as UNAVAILABLE (503, retry). */
    private readonly maxWaiting = 10_000,
  ) {
    this.queue = new BatchingQueue((items) => this.write(items), options);
  }

  add(scope: FeedbackScope, record: FeedbackRecord): Promise<void> {
    if (this.closed)
      return Promise.reject(new DomainError(ErrorCode.UNAVAILABLE, 'the server is stopping; send the score again in a moment'));
    if (this.waiting >= this.maxWaiting) {
      return Promise.reject(
        new DomainError(ErrorCode.UNAVAILABLE, `${this.maxWaiting} scores are waiting to be stored; send this one again in a moment`),
      );
    }
    this.waiting++;
    return this.queue.add([{ scope, record, receivedAt: Date.now() }]).finally(() => this.waiting--);
  }

  /** Writes what was added and stops taking more. */
  close(): Promise<void> {
    this.closed = true;
    return this.queue.close();
  }

  /**
   * Once the insert holds, every score of the write is stored: a project whose lookup or refresh
   * fails is logged and its sessions catch up with their next refresh, and no request fails for it
   * (a failed answer would make clients send the score again, stored twice).
   */
  private async write(items: Pending[]): Promise<void> {
    await this.repository.insert(items);
    const byProject = new Map<string, { scope: FeedbackScope; traceIds: string[] }>();
    for (const { scope, record } of items) {
      const key = `${scope.tenantId}/${scope.projectId}`;
      const group = byProject.get(key) ?? byProject.set(key, { scope, traceIds: [] }).get(key)!;
      group.traceIds.push(record.traceId);
    }
    for (const { scope, traceIds } of byProject.values()) {
      try {
        const stored = await this.repository.storedTraces(scope, [...new Set(traceIds)]);
        // Session feedback is kept with the session's figures; a late trace brings its scores when it lands.
        if (stored.size > 0) await this.repository.refreshSessions(scope, [...stored]);
        for (const traceId of traceIds) if (!stored.has(traceId)) this.onUnknownTrace();
      } catch (error) {
        this.warn(`feedback of project ${scope.projectId} stored, its session figures not refreshed: ${(error as Error).message}`);
      }
    }
  }
}
