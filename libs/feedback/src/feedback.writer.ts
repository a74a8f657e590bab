import { BatchingQueue, type BatchingOptions } from '@spanforge/ingest';
import type { FeedbackRecord, FeedbackScope } from './feedback.model';
import type { FeedbackRepository } from './feedback.repository';

interface Pending {
  scope: FeedbackScope;
  record: FeedbackRecord;
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

  constructor(
    private readonly repository: Pick<FeedbackRepository, 'insert' | 'storedTraces' | 'refreshSessions'>,
    /** Told once per score accepted for a trace not stored (yet). */
    private readonly onUnknownTrace: () => void,
    options: BatchingOptions = { maxItems: 1_000, maxDelayMs: 0 },
  ) {
    this.queue = new BatchingQueue((items) => this.write(items), options);
  }

  add(scope: FeedbackScope, record: FeedbackRecord): Promise<void> {
    return this.queue.add([{ scope, record }]);
  }

  /** Writes what was added and stops taking more. */
  close(): Promise<void> {
    return this.queue.close();
  }

  private async write(items: Pending[]): Promise<void> {
    await this.repository.insert(items);
    const byProject = new Map<string, { scope: FeedbackScope; traceIds: string[] }>();
    for (const { scope, record } of items) {
      const key = `${scope.tenantId}/${scope.projectId}`;
      const group = byProject.get(key) ?? byProject.set(key, { scope, traceIds: [] }).get(key)!;
      group.traceIds.push(record.traceId);
    }
    for (const { scope, traceIds } of byProject.values()) {
      const unique = [...new Set(traceIds)];
      const stored = await this.repository.storedTraces(scope, unique);
      // Session feedback is kept with the session's figures; a late trace brings its scores when it lands.
      if (stored.size > 0) await this.repository.refreshSessions(scope, [...stored]);
      for (const traceId of traceIds) if (!stored.has(traceId)) this.onUnknownTrace();
    }
  }
}
