import type { JobsOptions } from 'bullmq';

/**
 * The ingest queue contract, shared by the gateway (producer) and the worker (consumer). New
 * payload fields are optional so jobs already queued keep working across a deploy.
 */
export const INGEST_QUEUE = 'ingest';

export const IngestJobName = {
  /** One OTLP traces or logs export, as received: the worker decodes, normalises, prices and stores it. */
  Export: 'otlp-export',
  /** Counters the gateway kept for requests that never became an export job (rate-limited, refused). */
  Accounting: 'accounting',
  /** An operator's replay of a project's dead letters (after a fix): the worker writes them again. */
  ReplayDeadLetters: 'replay-dead-letters',
} as const;

/**
 * One export per job, carrying the request body (inflated, then zstd-compressed), not per-span
 * JSON: measured in bench:ingest (BENCHMARKS.md), per-span JSON jobs cost several times more Node
 * CPU per span than one job of compact bytes, and the worker re-decodes at a few µs a span.
 * zstd level 1 costs ~2 µs a span and shrinks what the queue stores and copies ~4×.
 */
export interface ExportJob {
  v: 1;
  tenantId: string;
  projectId: string;
  format: 'protobuf' | 'json';
  /** base64 of the body bytes (compressed as `encoding` says). */
  body: string;
  /** 'zstd' or absent (raw bytes). */
  encoding?: 'zstd';
  /** Milliseconds since the epoch when the gateway accepted the export. */
  receivedAt: number;
  /** Unique per export; makes the accounting rows of a retried job idempotent. */
  exportId: string;
  /** Spans the gateway counted (received) and accepted; the worker's decode gives the same. */
  receivedSpans: number;
  acceptedSpans: number;
  bytes: number;
  /**
   * What the body is: an ExportTraceServiceRequest when absent or 'traces', an
   * ExportLogsServiceRequest (whose GenAI events are kept, received and accepted spans 0) for 'logs'.
   */
  signal?: 'traces' | 'logs';
}

export interface AccountingEntry {
  tenantId: string;
  projectId: string;
  /** Start of the minute, milliseconds since the epoch. */
  minute: number;
  outcome: AccountingOutcome;
  reason: string;
  requests: number;
  spans: number;
  bytes: number;
}

export type AccountingOutcome = 'received' | 'accepted' | 'rejected' | 'rate_limited' | 'refused';

export interface AccountingJob {
  v: 1;
  /** Unique per flush; makes a retried job idempotent. */
  batchId: string;
  entries: AccountingEntry[];
}

export interface ReplayDeadLettersJob {
  v: 1;
  tenantId: string;
  projectId: string;
  /** The dead letters to replay; absent: every one of the project not replayed yet. */
  ids?: string[];
}

export type IngestJob = ExportJob | AccountingJob | ReplayDeadLettersJob;

/**
 * Job options in one place. Transient failures (ClickHouse down) retry with exponential backoff:
 * 12 tries, 500 ms doubling, about 34 minutes in all. Poison input fails at once with
 * UnrecoverableError. A job that fails for good is never removed by the queue: the worker moves it
 * to the dead letters (apps/worker/src/ingest/failed-jobs.sweeper.ts). Completed jobs are kept
 * only in bounded numbers.
 */
export const INGEST_JOB_OPTIONS: JobsOptions = {
  attempts: 12,
  backoff: { type: 'exponential', delay: 500 },
  removeOnComplete: { count: 1_000 },
  removeOnFail: false,
};
