import type { Job, Queue } from 'bullmq';
import { Counter } from 'prom-client';
import { UpkeepFailedError, type DeadLetter, type DeadLetterRepository } from '@spanforge/ingest';
import { IngestJobName, type ExportJob, type IngestJob } from '@spanforge/queue';
import { FailedJobsSweeper } from './failed-jobs.sweeper';

/** A failed export job as the queue answers it: its attempts, and the stacks of those that failed. */
function failedExport(id: string, failures: Error[], extra: Partial<Job<IngestJob>> = {}) {
  const data: ExportJob = {
    v: 1,
    tenantId: 't',
    projectId: `project-${id}`,
    format: 'json',
    body: '',
    receivedAt: Date.UTC(2026, 11, 3, 10),
    exportId: `export-${id}`,
    receivedSpans: 2,
    acceptedSpans: 2,
    bytes: 10,
  };
  const job = {
    id,
    name: IngestJobName.Export,
    data,
    attemptsMade: failures.length,
    attemptsStarted: failures.length,
    stalledCounter: 0,
    stacktrace: failures.map((error) => error.stack!),
    failedReason: failures.at(-1)?.message,
    removed: false,
    remove: async () => void (job.removed = true),
    ...extra,
  };
  return job;
}

describe('FailedJobsSweeper', () => {
  const setUp = (jobs: Array<ReturnType<typeof failedExport>>, recheck: (job: ExportJob) => Promise<void>) => {
    const letters: DeadLetter[] = [];
    const errors: string[] = [];
    const sweeper = new FailedJobsSweeper({
      queue: { getFailed: async () => jobs.filter((job) => !job.removed) } as unknown as Queue<IngestJob>,
      deadLetters: { add: async (added: DeadLetter[]) => void letters.push(...added) } as unknown as DeadLetterRepository,
      accounting: async () => undefined,
      deadLettered: new Counter({ name: 'test_dead_lettered', help: 'test', labelNames: ['reason'], registers: [] }),
      log: { warn: () => undefined, error: (message) => void errors.push(message) },
      retentionOf: async () => 0,
      recheck,
    });
    return { sweeper, letters, errors };
  };

  it('runs the upkeep again only for exports whose run may have stopped mid-round, and moves every job', async () => {
    const stoppedInUpkeep = failedExport('a', [new Error('Timeout error.'), new UpkeepFailedError(new Error('Connection refused'))]);
    const failedInInsert = failedExport('b', [new Error('Timeout error.'), new Error('Timeout error.')]);
    const diedWithIt = failedExport('c', [], { stalledCounter: 6, failedReason: 'job stalled more than allowable limit' });
    const rechecked: string[] = [];
    const { sweeper, letters } = setUp([stoppedInUpkeep, failedInInsert, diedWithIt], async (job) => void rechecked.push(job.exportId));

    await sweeper.sweepNow();

    expect(rechecked.sort()).toEqual(['export-a', 'export-c']);
    expect(letters.map((letter) => [letter.id, letter.reason])).toEqual([
      ['job:a', 'retries_exhausted'],
      ['job:b', 'retries_exhausted'],
      ['job:c', 'stalled'],
    ]);
    expect([stoppedInUpkeep, failedInInsert, diedWithIt].map((job) => job.removed)).toEqual([true, true, true]);
  });

  it('logs an upkeep that fails again with the job, and still moves the job: its letter is kept for replay', async () => {
    const job = failedExport('a', [new UpkeepFailedError(new Error('Connection refused'))]);
    const { sweeper, letters, errors } = setUp([job], async () => {
      throw new Error('Connection refused');
    });

    await sweeper.sweepNow();

    expect(letters.map((letter) => letter.id)).toEqual(['job:a']);
    expect(job.removed).toBe(true);
    expect(errors).toContainEqual(expect.stringMatching(/project project-a: the upkeep of dead-lettered job job:a's traces failed/));
  });
});
