import { UnrecoverableError, type Job } from 'bullmq';
import { IngestJobName, type AccountingJob, type ExportJob, type IngestJob, type ReplayDeadLettersJob } from '@spanforge/queue';
import {
  PoisonExportError,
  exportRows,
  logEventRows,
  partsOfStoredLines,
  type AccountingRow,
  type BatchingQueue,
  type DeadLetter,
  type DeadLetterRepository,
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
        return { stored: await this.storeExport(job.data as ExportJob, ranBefore(job)) };
      case IngestJobName.Accounting:
        await this.storeAccounting(job.data as AccountingJob);
        return { stored: 0 };
      case IngestJobName.ReplayDeadLetters:
        return { stored: await this.replay(job.data as ReplayDeadLettersJob, ranBefore(job)) };
      default:
        throw new UnrecoverableError(`unknown ingest job name "${job.name}"`);
    }
  }

  private async storeExport(data: ExportJob, rerun: boolean): Promise<number> {
    if (data.signal === 'logs') return this.storeLogEvents(data);
    const [overrides, policy] = await Promise.all([
      this.deps.pricing.overridesFor(data.projectId),
      this.deps.policies.policyFor(data.projectId),
    ]);
    let chunk;
    try {
      // On this thread: moving it to worker threads measured no faster on 2 cores (BENCHMARKS.md).
      chunk = exportRows(data, overrides, policy);
    } catch (error) {
      if (error instanceof PoisonExportError) throw new UnrecoverableError(error.message);
      throw error;
    }
    for (const [column, rows] of chunk.conversions) {
      this.deps.log.warn(
        `project ${data.projectId}: export ${data.exportId}: ${rows} row(s) had ${column} outside its column's domain and were stored with it converted (a normaliser bug)`,
      );
    }
    if (chunk.redactions > 0) this.deps.redacted(chunk.redactions);
    // The chunk itself, not a copy: the writer drops its text once inserted, and a copy would leave
    // this one holding it until the upkeep is done (every job in flight, hundreds of KB each).
    chunk.rerun = rerun;
    await Promise.all([this.deps.spans.write(chunk), this.deps.accounting.add(chunk.accounting)]);
    return chunk.rows;
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
      const text = rows.map((letter) => `${letter.payload}\n`).join('');
      const ids = rows.map(idsOf);
      await this.deps.spans.write({
        ...project,
        exportId: '',
        minute: 0,
        parts: partsOfStoredLines(text),
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
 * Whether a job ran before: it is a retry, or a worker took it over from one whose lock lapsed
 * (killed, or stalled). Its earlier run may have stored part of what it does.
 */
export function ranBefore(job: Pick<Job<IngestJob>, 'attemptsMade' | 'attemptsStarted' | 'stalledCounter'>): boolean {
  return job.attemptsMade > 0 || job.attemptsStarted > 1 || job.stalledCounter > 0;
}
