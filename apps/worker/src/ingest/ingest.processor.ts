import { UnrecoverableError, type Job } from 'bullmq';
import { IngestJobName, type AccountingJob, type ExportJob, type IngestJob, type ReplayDeadLettersJob } from '@spanforge/queue';
import {
  PoisonExportError,
  exportRows,
  isUpkeepFailure,
  logEventRows,
  partsOfStoredLines,
  type AccountingRow,
  type BatchingQueue,
  type DeadLetter,
  type DeadLetterRepository,
  type RowChunk,
  type SpanLogEventRow,
  type SpanWriter,
  type WriterLog,
} from '@spanforge/ingest';
import type { ProjectPolicies } from '@spanforge/tenancy';
import type { ProjectPricing } from './project-pricing';

export interface IngestProcessorDeps {
  spans: SpanWriter;
  /** GenAI events that came as OTLP log records (span_log_events). */
  logEvents: BatchingQueue<SpanLogEventRow>;
  accounting: BatchingQueue<AccountingRow>;
  pricing: ProjectPricing;
  /** Each project's data policy, applied to every span and GenAI event before it is written. */
  policies: ProjectPolicies;
  /** Counts the values a policy redacted. */
  redacted: (values: number) => void;
  deadLetters: DeadLetterRepository;
  log: WriterLog;
}

/** Dead letters replayed per replay job (a replay of more takes several jobs' worth of calls). */
const REPLAY_BATCH = 10_000;

/**
 * One queue job → rows. An export is decoded again (the gateway validated it), each span
 * normalised and priced, and the job resolves only when its rows are stored, so the queue
 * acknowledges nothing that could still be lost. Input that cannot be decoded is poison: retrying
 * cannot help, so it fails at once with the reason (and goes to the dead letters).
 */
export class IngestProcessor {
  constructor(private readonly deps: IngestProcessorDeps) {}

  async process(job: Job<IngestJob>): Promise<{ stored: number }> {
    switch (job.name) {
      case IngestJobName.Export:
        return { stored: await this.storeExport(job.data as ExportJob, upkeepMayHaveStopped(job)) };
      case IngestJobName.Accounting:
        await this.storeAccounting(job.data as AccountingJob);
        return { stored: 0 };
      case IngestJobName.ReplayDeadLetters:
        return { stored: await this.replay(job.data as ReplayDeadLettersJob, upkeepMayHaveStopped(job)) };
      default:
        throw new UnrecoverableError(`unknown ingest job name "${job.name}"`);
    }
  }

  /**
   * After an export's job failed for good (it goes to the dead letters): its last run may have
   * stopped part-way through its traces' upkeep, leaving a trace counted under two minutes, and no
   * retry will come to look. Its traces' upkeep runs once more, nothing inserted. An export that
   * cannot be decoded stored nothing, and GenAI events have no upkeep.
   */
  async recheck(data: ExportJob): Promise<void> {
    if (data.signal === 'logs') return;
    let chunk;
    try {
      chunk = await this.rowsOf(data);
    } catch (error) {
      if (error instanceof UnrecoverableError) return;
      throw error;
    }
    await this.deps.spans.recheck(chunk);
  }

  private async storeExport(data: ExportJob, rerun: boolean): Promise<number> {
    if (data.signal === 'logs') return this.storeLogEvents(data);
    const chunk = await this.rowsOf(data);
    for (const [column, rows] of chunk.conversions) {
      this.deps.log.warn(
        `project ${data.projectId}: export ${data.exportId}: ${rows} row(s) had ${column} outside its column's domain and were stored with it converted (a normaliser bug)`,
      );
    }
    if (chunk.redactions > 0) this.deps.redacted(chunk.redactions);
    // The chunk itself, not a copy: the writer drops its rows once inserted, and a copy would leave
    // this one holding it until the upkeep is done (every job in flight, hundreds of KB each).
    chunk.rerun = rerun;
    // Both settle before the job fails: the write's failure (an UpkeepFailedError tells a retry to
    // look at its traces' filings) must be the one the queue records, and a retry must not start
    // while this attempt's round is still under way.
    const [written, accounted] = await Promise.allSettled([this.deps.spans.write(chunk), this.deps.accounting.add(chunk.accounting)]);
    if (written.status === 'rejected') throw written.reason;
    if (accounted.status === 'rejected') throw accounted.reason;
    return chunk.rows;
  }

  /** An export's rows, normalised, priced and under its project's policy; poison input is an UnrecoverableError. */
  private async rowsOf(data: ExportJob): Promise<RowChunk> {
    const [overrides, policy] = await Promise.all([
      this.deps.pricing.overridesFor(data.projectId),
      this.deps.policies.policyFor(data.projectId),
    ]);
    try {
      // On this thread: moving it to worker threads measured no faster on 2 cores (BENCHMARKS.md).
      return exportRows(data, overrides, policy);
    } catch (error) {
      if (error instanceof PoisonExportError) throw new UnrecoverableError(error.message);
      throw error;
    }
  }

  /** A logs export: its GenAI events, each kept for the span it was emitted in; the other records were counted by the gateway. */
  private async storeLogEvents(data: ExportJob): Promise<number> {
    const policy = await this.deps.policies.policyFor(data.projectId);
    let events;
    try {
      events = logEventRows(data, policy);
    } catch (error) {
      if (error instanceof PoisonExportError) throw new UnrecoverableError(error.message);
      throw error;
    }
    await this.deps.logEvents.add(events.rows);
    return events.rows.length;
  }

  private async storeAccounting(data: AccountingJob): Promise<void> {
    await this.deps.accounting.add(
      data.entries.map((e) => ({
        tenant_id: e.tenantId,
        project_id: e.projectId,
        minute: Math.floor(e.minute / 1000),
        outcome: e.outcome,
        reason: e.reason,
        batch_id: data.batchId,
        requests: e.requests,
        spans: e.spans,
        bytes: e.bytes,
      })),
    );
  }

  /**
   * Writes a project's dead letters again through the same path as new data: a span row is
   * inserted as it was built (a refusal dead-letters it anew), a job runs again as a new job would.
   * Each is marked replayed once written; a crash before that replays it again, which copies collapse.
   */
  private async replay(data: ReplayDeadLettersJob, rerun: boolean): Promise<number> {
    const project = { tenantId: data.tenantId, projectId: data.projectId };
    const letters = await this.deps.deadLetters.pending(project, data.ids, REPLAY_BATCH);
    const rows = letters.filter((letter) => letter.kind === 'span_row');
    let stored = 0;
    if (rows.length > 0) {
      const ids = rows.map(idsOf);
      await this.deps.spans.write({
        ...project,
        exportId: '',
        minute: 0,
        parts: partsOfStoredLines(rows.map((letter) => `${letter.payload}\n`)),
        rows: rows.length,
        traces: [...new Set(ids.map((row) => row.trace_id))],
        sessions: [...new Set(ids.map((row) => row.session_id).filter((sessionId) => sessionId !== ''))],
        plainRoots: [],
        accounting: [],
        conversions: new Map(),
        redactions: 0,
        rerun,
      });
      stored += rows.length;
    }
    for (const letter of letters) {
      if (letter.kind === 'span_row') continue;
      const job = JSON.parse(letter.payload) as { name: string; data: ExportJob | AccountingJob };
      // A dead-lettered export ran before (it failed for good, or stalled too often): part of it may be stored.
      if (job.name === IngestJobName.Export) stored += await this.storeExport(job.data as ExportJob, true);
      else await this.storeAccounting(job.data as AccountingJob);
    }
    await this.deps.deadLetters.markReplayed(letters, Date.now());
    this.deps.log.warn(`project ${data.projectId}: ${letters.length} dead letter(s) replayed (${stored} span(s) written again)`);
    return stored;
  }
}

/** The trace and session a dead-lettered span row names. */
function idsOf(letter: DeadLetter): { trace_id: string; session_id: string } {
  const row = JSON.parse(letter.payload) as { trace_id: string; session_id?: string };
  return { trace_id: row.trace_id, session_id: row.session_id ?? '' };
}

/**
 * Whether an earlier run of this job may have stopped part-way through its traces' upkeep, so
 * where they are filed must be looked up rather than trusted: a run that failed there (the queue
 * keeps every failed attempt's stack), or one that ended with no failure recorded (its worker
 * killed or stalled, its lock lapsed: a worker took it over). A retry of attempts that all failed
 * in their insert or before needs no look: no figure of theirs was written. So after an outage of
 * the store, when every job is a retry, rounds look only for the jobs a failure caught mid-round.
 */
export function upkeepMayHaveStopped(
  job: Pick<Job<IngestJob>, 'attemptsMade' | 'attemptsStarted' | 'stalledCounter' | 'stacktrace'>,
): boolean {
  if (job.stalledCounter > 0 || job.attemptsStarted > job.attemptsMade + 1) return true;
  return (job.stacktrace ?? []).some(isUpkeepFailure);
}
