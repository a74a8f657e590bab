import { DomainError, ErrorCode } from '@spanforge/errors';
import { BatchingQueue, type BatchingOptions } from '@spanforge/ingest';
import type { FeedbackRecord, FeedbackScope } from './feedback.model';
import type { FeedbackRepository } from './feedback.repository';

interface Pending {
  scope: FeedbackScope;
  record: FeedbackRecord;
  /** When the request came in (ms): scores of one write keep their order, and the newest copy of a score wins. */
  receivedAt: number;
  /** Set by the write when the score is not stored: its request fails with this. */
  refusal?: DomainError;
}

/** A score's identity in its project: a client id names one trace and score name. */
interface Owner {
  traceId: string;
  name: string;
  firstReceivedAt: number;
}

const sameScore = (owner: Owner, record: FeedbackRecord) => owner.traceId === record.traceId && owner.name === record.name;

const idInUse = (id: string) =>
  new DomainError(
    ErrorCode.CONFLICT,
    `score id "${id}" already names a score of another trace or name in this project; send it again with that traceId and name to correct that score, or use a new id`,
  );

/**
 * Group commit for feedback: the scores of requests that arrive while a write runs go out together
 * as the next write. One write is, per project, one lookup of the ids already stored; one insert;
 * then per project one lookup of which traces are stored and one refresh of their sessions'
 * figures. A request's promise settles when the write holding its score is done, so an accepted
 * score is stored and its session's figures show it, and a refused one (an id that names another
 * score) fails alone. Writes run one at a time, so each one's lookup sees every earlier write of
 * this process. (One request at a time, each wrote a part and refreshed its session alone: 12-16
 * requests/s.)
 */
export class FeedbackWriter {
  private readonly queue: BatchingQueue<Pending>;
  /** Scores added and not yet stored. */
  private waiting = 0;
  private closed = false;

  constructor(
    private readonly repository: Pick<FeedbackRepository, 'storedScoreIds' | 'insert' | 'storedTraces' | 'refreshSessions'>,
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
    const pending: Pending = { scope, record, receivedAt: Date.now() };
    return this.queue
      .add([pending])
      .then(() => {
        if (pending.refusal) throw pending.refusal;
      })
      .finally(() => this.waiting--);
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
    const byProject = new Map<string, { scope: FeedbackScope; items: Pending[] }>();
    for (const item of items) {
      const key = `${item.scope.tenantId}/${item.scope.projectId}`;
      (byProject.get(key) ?? byProject.set(key, { scope: item.scope, items: [] }).get(key)!).items.push(item);
    }
    const rows: Array<Pending & { firstReceivedAt: number }> = [];
    for (const { scope, items: own } of byProject.values()) rows.push(...(await this.identify(scope, own)));
    if (rows.length === 0) return;
    await this.repository.insert(rows);
    for (const { scope, items: own } of byProject.values()) {
      const traceIds = own.filter((item) => !item.refusal).map((item) => item.record.traceId);
      if (traceIds.length === 0) continue;
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

  /**
   * The rows to insert for one project's scores, in arrival order. An id names one score of the
   * project (its trace and name), as stored or as first sent in this write: a score with an id
   * already naming another is refused (CONFLICT) and nothing of it is stored; a re-send of a
   * score keeps its first arrival as its time, and of several in this write only the last is
   * inserted (the newest copy wins, whatever order the insert sorts them in).
   */
  private async identify(scope: FeedbackScope, items: Pending[]): Promise<Array<Pending & { firstReceivedAt: number }>> {
    const owners = new Map<string, Owner[]>();
    for (const stored of await this.repository.storedScoreIds(scope, [...new Set(items.map((item) => item.record.id))])) {
      owners.set(stored.id, [...(owners.get(stored.id) ?? []), stored]);
    }
    const rows = new Map<string, Pending & { firstReceivedAt: number }>();
    for (const item of items) {
      const { record } = item;
      const named = owners.get(record.id) ?? [];
      let owner = named.find((o) => sameScore(o, record));
      if (!owner && named.length > 0) {
        item.refusal = idInUse(record.id);
        continue;
      }
      if (!owner) owners.set(record.id, [(owner = { traceId: record.traceId, name: record.name, firstReceivedAt: item.receivedAt })]);
      const key = JSON.stringify([record.traceId, record.name, record.id]);
      rows.delete(key);
      rows.set(key, { ...item, firstReceivedAt: Math.min(owner.firstReceivedAt, item.receivedAt) });
    }
    return [...rows.values()];
  }
}
