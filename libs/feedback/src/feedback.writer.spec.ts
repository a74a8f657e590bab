import type { FeedbackRecord, FeedbackScope } from './feedback.model';
import { FeedbackWriter } from './feedback.writer';

const A: FeedbackScope = { tenantId: 't1', projectId: 'p1' };
const B: FeedbackScope = { tenantId: 't2', projectId: 'p2' };

function score(traceId: string, id = `${traceId}-score`): FeedbackRecord {
  return { id, traceId, spanId: '', name: 'helpful', dataType: 'NUMERIC', valueNumber: 4, valueText: '4', comment: '', source: 'test' };
}

type Row = { scope: FeedbackScope; record: FeedbackRecord; receivedAt: number; firstReceivedAt?: number };

/** A repository whose insert waits until `release()`, recording every call and keeping what it stored. */
function recordingRepository(stored: Set<string>) {
  const calls: string[] = [];
  const inserted: string[][] = [];
  const rows: Row[] = [];
  const refreshed: Array<{ scope: FeedbackScope; traceIds: string[] }> = [];
  let release: () => void = () => undefined;
  let gate = Promise.resolve();
  const repository = {
    async storedScoreIds(scope: FeedbackScope, ids: string[]) {
      calls.push('ids');
      return rows
        .filter((r) => r.scope.projectId === scope.projectId && ids.includes(r.record.id))
        .map((r) => ({
          id: r.record.id,
          traceId: r.record.traceId,
          name: r.record.name,
          firstReceivedAt: r.firstReceivedAt ?? r.receivedAt,
        }));
    },
    async insert(records: Row[]) {
      calls.push('insert');
      inserted.push(records.map((r) => r.record.id));
      rows.push(...records);
      await gate;
    },
    async storedTraces(_scope: FeedbackScope, traceIds: string[]) {
      calls.push('lookup');
      return new Set(traceIds.filter((id) => stored.has(id)));
    },
    async refreshSessions(scope: FeedbackScope, traceIds: string[]) {
      calls.push('refresh');
      refreshed.push({ scope, traceIds: [...traceIds].sort() });
    },
  };
  return {
    repository,
    calls,
    inserted,
    rows,
    refreshed,
    hold() {
      gate = new Promise((resolve) => (release = resolve));
    },
    release: () => release(),
  };
}

describe('FeedbackWriter', () => {
  it('writes the scores that arrive during a write together, as the next write', async () => {
    const repo = recordingRepository(new Set(['a1', 'a2', 'a3']));
    const writer = new FeedbackWriter(repo.repository, () => undefined);
    repo.hold();
    const first = writer.add(A, score('a1'));
    while (!repo.calls.includes('insert')) await new Promise((r) => setTimeout(r, 1));
    const later = [writer.add(A, score('a2')), writer.add(A, score('a3')), writer.add(A, score('a3', 'a3-again'))];
    repo.release();
    await first;
    await Promise.all(later);
    expect(repo.inserted).toEqual([['a1-score'], ['a2-score', 'a3-score', 'a3-again']]);
    expect(repo.refreshed).toEqual([
      { scope: A, traceIds: ['a1'] },
      { scope: A, traceIds: ['a2', 'a3'] },
    ]);
    await writer.close();
  });

  it('settles a request only after its session figures are refreshed', async () => {
    const repo = recordingRepository(new Set(['a1']));
    const writer = new FeedbackWriter(repo.repository, () => undefined);
    await writer.add(A, score('a1'));
    expect(repo.calls).toEqual(['ids', 'insert', 'lookup', 'refresh']);
    await writer.close();
  });

  it('refreshes each project on its own, only for stored traces, and counts the scores of unknown ones', async () => {
    const repo = recordingRepository(new Set(['a1', 'b1']));
    let unknown = 0;
    const writer = new FeedbackWriter(repo.repository, () => unknown++, { maxItems: 100, maxDelayMs: 20 });
    await Promise.all([
      writer.add(A, score('a1')),
      writer.add(B, score('b1')),
      writer.add(A, score('a-late')),
      writer.add(B, score('b-late')),
      writer.add(B, score('b-late', 'b-late-2')),
    ]);
    expect(repo.inserted).toHaveLength(1);
    expect(repo.refreshed).toEqual([
      { scope: A, traceIds: ['a1'] },
      { scope: B, traceIds: ['b1'] },
    ]);
    expect(unknown).toBe(3);
    await writer.close();
  });

  it('rejects every request of a write that fails, and takes the next ones', async () => {
    const repo = recordingRepository(new Set(['a1']));
    let fail = true;
    const failing = {
      ...repo.repository,
      async insert(records: Row[]) {
        if (fail) throw new Error('ClickHouse is down');
        return repo.repository.insert(records);
      },
    };
    const writer = new FeedbackWriter(failing, () => undefined, { maxItems: 100, maxDelayMs: 20 });
    const results = await Promise.allSettled([writer.add(A, score('a1')), writer.add(A, score('a1', 'second'))]);
    expect(results.map((r) => r.status)).toEqual(['rejected', 'rejected']);
    fail = false;
    await writer.add(A, score('a1', 'third'));
    expect(repo.inserted).toEqual([['third']]);
    await writer.close();
  });

  it("answers every request once the insert holds, even when a project's session refresh fails, and refreshes the others", async () => {
    const repo = recordingRepository(new Set(['a1', 'b1']));
    const warnings: string[] = [];
    const failing = {
      ...repo.repository,
      async refreshSessions(scope: FeedbackScope, traceIds: string[]) {
        if (scope === A) throw new Error('refresh timed out');
        return repo.repository.refreshSessions(scope, traceIds);
      },
    };
    const writer = new FeedbackWriter(
      failing,
      () => undefined,
      { maxItems: 100, maxDelayMs: 20 },
      (m) => warnings.push(m),
    );
    await Promise.all([writer.add(A, score('a1')), writer.add(B, score('b1'))]);
    expect(repo.inserted).toEqual([['a1-score', 'b1-score']]);
    expect(repo.refreshed).toEqual([{ scope: B, traceIds: ['b1'] }]);
    expect(warnings).toEqual([`feedback of project ${A.projectId} stored, its session figures not refreshed: refresh timed out`]);
    await writer.close();
  });

  it('stamps each score with its own arrival, so the scores of one write keep their order', async () => {
    const stamps: number[][] = [];
    const repo = recordingRepository(new Set());
    const stamping = {
      ...repo.repository,
      async insert(records: Array<{ scope: FeedbackScope; record: FeedbackRecord; receivedAt: number }>) {
        stamps.push(records.map((r) => r.receivedAt));
      },
    };
    const writer = new FeedbackWriter(stamping, () => undefined, { maxItems: 100, maxDelayMs: 30 });
    const first = writer.add(A, score('a1'));
    await new Promise((r) => setTimeout(r, 5));
    await Promise.all([first, writer.add(A, score('a2'))]);
    expect(stamps).toHaveLength(1);
    expect(stamps[0]![1]!).toBeGreaterThan(stamps[0]![0]!);
    await writer.close();
  });

  it('refuses scores beyond the waiting bound as UNAVAILABLE, and takes them again once stored', async () => {
    const repo = recordingRepository(new Set());
    const writer = new FeedbackWriter(repo.repository, () => undefined, { maxItems: 100, maxDelayMs: 0 }, undefined, 2);
    repo.hold();
    const admitted = [writer.add(A, score('a1')), writer.add(A, score('a2'))];
    await expect(writer.add(A, score('a3'))).rejects.toMatchObject({ code: 'UNAVAILABLE' });
    repo.release();
    await Promise.all(admitted);
    await writer.add(A, score('a3'));
    expect(repo.inserted.flat()).toEqual(['a1-score', 'a2-score', 'a3-score']);
    await writer.close();
  });

  it('writes what was added before close, and refuses more after', async () => {
    const repo = recordingRepository(new Set(['a1']));
    const writer = new FeedbackWriter(repo.repository, () => undefined, { maxItems: 100, maxDelayMs: 10_000 });
    const pending = writer.add(A, score('a1'));
    await writer.close();
    await pending;
    expect(repo.inserted).toEqual([['a1-score']]);
    await expect(writer.add(A, score('a1', 'late'))).rejects.toMatchObject({
      code: 'UNAVAILABLE',
      message: expect.stringMatching(/stopping/),
    });
  });

  describe('an id names one score of its project', () => {
    const named = (traceId: string, name: string, id: string, valueNumber = 4): FeedbackRecord => ({
      ...score(traceId, id),
      name,
      valueNumber,
      valueText: String(valueNumber),
    });

    it('refuses an id sent again for another name or trace (CONFLICT), storing nothing of it, and stores the other scores', async () => {
      const repo = recordingRepository(new Set(['a1', 'a2']));
      const writer = new FeedbackWriter(repo.repository, () => undefined, { maxItems: 100, maxDelayMs: 20 });
      await writer.add(A, named('a1', 'helpfulness', 'x'));
      // An earlier write holds x; in this write, y is first sent for accuracy, then again for another name.
      const results = await Promise.allSettled([
        writer.add(A, named('a1', 'accuracy', 'x')),
        writer.add(A, named('a2', 'helpfulness', 'x')),
        writer.add(A, named('a1', 'accuracy', 'y')),
        writer.add(A, named('a1', 'tone', 'y')),
        writer.add(A, named('a1', 'accuracy', 'z')),
      ]);
      expect(results.map((r) => (r.status === 'rejected' ? (r.reason as { code: string }).code : 'stored'))).toEqual([
        'CONFLICT',
        'CONFLICT',
        'stored',
        'CONFLICT',
        'stored',
      ]);
      expect((results[0] as PromiseRejectedResult).reason.message).toMatch(/score id "x" already names a score of another trace or name/);
      expect(repo.inserted).toEqual([['x'], ['y', 'z']]);
      expect(repo.refreshed).toEqual([
        { scope: A, traceIds: ['a1'] },
        { scope: A, traceIds: ['a1'] },
      ]);
      await writer.close();
    });

    it('takes a re-send as a correction: the first arrival stays its time, the newest copy is stored last', async () => {
      const repo = recordingRepository(new Set());
      const writer = new FeedbackWriter(repo.repository, () => undefined, { maxItems: 100, maxDelayMs: 20 });
      await writer.add(A, named('a1', 'helpfulness', 'x', 2));
      const first = repo.rows[0]!.receivedAt;
      await new Promise((r) => setTimeout(r, 5));
      // Two more copies in one write: one row, the last one sent.
      await Promise.all([writer.add(A, named('a1', 'helpfulness', 'x', 3)), writer.add(A, named('a1', 'helpfulness', 'x', 5))]);
      expect(repo.inserted).toEqual([['x'], ['x']]);
      const correction = repo.rows[1]!;
      expect(correction.record.valueNumber).toBe(5);
      expect(correction.firstReceivedAt).toBe(first);
      expect(correction.receivedAt).toBeGreaterThan(first);
      await writer.close();
    });

    it('keeps ids apart between projects', async () => {
      const repo = recordingRepository(new Set());
      const writer = new FeedbackWriter(repo.repository, () => undefined, { maxItems: 100, maxDelayMs: 20 });
      await Promise.all([writer.add(A, named('a1', 'helpfulness', 'x')), writer.add(B, named('b1', 'accuracy', 'x'))]);
      expect(repo.inserted).toEqual([['x', 'x']]);
      await writer.close();
    });

    it('fails the whole write when the ids cannot be looked up (nothing stored: the client sends again)', async () => {
      const repo = recordingRepository(new Set());
      const failing = {
        ...repo.repository,
        async storedScoreIds(): Promise<never> {
          throw new Error('ClickHouse is down');
        },
      };
      const writer = new FeedbackWriter(failing, () => undefined, { maxItems: 100, maxDelayMs: 20 });
      await expect(writer.add(A, named('a1', 'helpfulness', 'x'))).rejects.toThrow('ClickHouse is down');
      expect(repo.inserted).toEqual([]);
      await writer.close();
    });
  });
});
