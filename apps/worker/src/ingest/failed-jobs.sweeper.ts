import type { Job, Queue } from 'bullmq';
import type { Counter } from 'prom-client';
import { IngestJobName, type ExportJob, type IngestJob } from '@spanforge/queue';
import { accountingMinute, type AccountingRow, type DeadLetter, type DeadLetterRepository, type WriterLog } from '@spanforge/ingest';
import { upkeepMayHaveStopped } from './ingest.processor';

/** How often the failed set is looked at; a failed job is in the dead letters within this time. */
export const SWEEP_INTERVAL_MS = 5_000;
/** Failed jobs moved per look (the rest wait for the next). */
const SWEEP_BATCH = 200;

export interface FailedJobsSweeperDeps {
  queue: Queue<IngestJob>;
  deadLetters: DeadLetterRepository;
  accounting: (rows: AccountingRow[]) => Promise<void>;
  deadLettered: Counter;
  log: WriterLog;
  /** A project's retention in days (0: kept): a dead-lettered export holds its spans' content. */
  retentionOf: (projectId: string) => Promise<number>;
  /** Runs an export's traces' upkeep once more, nothing inserted (IngestProcessor.recheck). */
  recheck: (job: ExportJob) => Promise<void>;
}

/**
 * Moves ingest jobs that failed for good — retries used up, poison input, or stalled too often
 * (the queue fails those itself, with no code of ours running) — from the queue's failed set to
 * the dead letters, so an acknowledged export never vanishes with the queue's bounded history.
 * Each is written under an id taken from the job (a sweep interrupted between the write and the
 * removal writes the same row again), logged at ERROR and counted in its project's accounting.
 * A dead-lettered export whose run may have stopped part-way through its traces' upkeep
 * (upkeepMayHaveStopped) then has that upkeep run once more: no retry will come to set it right.
 */
export class FailedJobsSweeper {
  private timer: NodeJS.Timeout | undefined;
  private sweeping: Promise<void> = Promise.resolve();

  constructor(private readonly deps: FailedJobsSweeperDeps) {}

  start(): void {
    this.timer = setInterval(() => void this.sweepNow(), SWEEP_INTERVAL_MS);
    this.timer.unref();
  }

  async stop(): Promise<void> {
    clearInterval(this.timer);
    await this.sweeping;
  }

  /** One look at the failed set (one at a time; a call during a sweep waits for it and looks again). */
  sweepNow(): Promise<void> {
    this.sweeping = this.sweeping.then(() =>
      this.sweep().catch((error: unknown) =>
        this.deps.log.error('moving failed ingest jobs to the dead letters failed; the next sweep tries again', error),
      ),
    );
    return this.sweeping;
  }

  private async sweep(): Promise<void> {
    const failed = ((await this.deps.queue.getFailed(0, SWEEP_BATCH - 1)) as Array<Job<IngestJob> | undefined>).filter(
      (job) => job !== undefined,
    );
    if (failed.length === 0) return;
    // A failed replay loses nothing (its dead letters stay pending): said, and let go.
    for (const job of failed.filter((candidate) => !isStoredWork(candidate))) {
      this.deps.log.error(`ingest job ${job.id} (${job.name}) failed for good: ${job.failedReason ?? 'no reason recorded'}`);
      await job.remove();
    }
    const jobs = failed.filter(isStoredWork);
    if (jobs.length === 0) return;
    const now = Date.now();
    const letters = await Promise.all(
      jobs.map(async (job) => {
        const letter = deadLetterOf(job, now);
        return { ...letter, retentionDays: letter.projectId ? await this.deps.retentionOf(letter.projectId) : 0 };
      }),
    );
    await this.deps.deadLetters.add(letters);
    const accounting = letters.filter((letter) => letter.kind === 'export_job').map((letter) => accountingOf(letter, jobs));
    if (accounting.length > 0) await this.deps.accounting(accounting);
    for (const letter of letters) {
      this.deps.log.error(
        `project ${letter.projectId || '(several)'}: ingest job ${letter.id} dead-lettered (${letter.reason}, ${letter.spans} span(s)): ${letter.error}`,
      );
      this.deps.deadLettered.inc({ reason: letter.reason }, letter.spans);
    }
    await this.recheck(jobs.filter((job) => job.name === IngestJobName.Export && upkeepMayHaveStopped(job)));
    for (const job of jobs) await job.remove();
  }

  /**
   * The exports' upkeep once more, together (their traces share rounds). One that fails is logged
   * and let go: its letter is kept, and replaying it runs the same upkeep.
   */
  private async recheck(exports: Array<Job<IngestJob>>): Promise<void> {
    await Promise.all(
      exports.map(async (job) => {
        const data = job.data as ExportJob;
        try {
          await this.deps.recheck(data);
        } catch (error) {
          this.deps.log.error(
            `project ${data.projectId}: the upkeep of dead-lettered job job:${job.id}'s traces failed; a trace it moved may show under two minutes until the letter is replayed`,
            error,
          );
        }
      }),
    );
  }
}

/** A job that carries data to store (an export, or the gateway's counters). */
function isStoredWork(job: Job<IngestJob>): boolean {
  return job.name === IngestJobName.Export || job.name === IngestJobName.Accounting;
}

/** Why a job failed for good, from what the queue recorded. */
function reasonOf(job: Job<IngestJob>): string {
  const failed = job.failedReason ?? '';
  if (/stalled/i.test(failed)) return 'stalled';
  if (/cannot be decoded|unknown ingest job/i.test(failed)) return 'poison_export';
  return 'retries_exhausted';
}

function deadLetterOf(job: Job<IngestJob>, now: number): DeadLetter {
  const isExport = job.name === IngestJobName.Export;
  const data = job.data as Partial<ExportJob>;
  return {
    tenantId: isExport ? (data.tenantId ?? '') : '',
    projectId: isExport ? (data.projectId ?? '') : '',
    id: `job:${job.id}`,
    kind: isExport ? 'export_job' : 'accounting_job',
    reason: reasonOf(job),
    error: `${job.failedReason ?? 'no reason recorded'} (after ${job.attemptsMade} attempt(s))`,
    exportId: isExport ? (data.exportId ?? '') : '',
    spans: isExport ? (data.acceptedSpans ?? 0) : 0,
    payload: JSON.stringify({ name: job.name, data: job.data }),
    deadLetteredAt: now,
    replayedAt: null,
    retentionDays: 0,
  };
}

function accountingOf(letter: DeadLetter, jobs: Array<Job<IngestJob>>): AccountingRow {
  const job = jobs.find((candidate) => `job:${candidate.id}` === letter.id)!;
  const data = job.data as ExportJob;
  return {
    tenant_id: letter.tenantId,
    project_id: letter.projectId,
    minute: accountingMinute(data),
    outcome: 'dead_lettered',
    reason: letter.reason,
    batch_id: letter.exportId,
    requests: 0,
    spans: letter.spans,
    bytes: 0,
  };
}
