import type { JobsOptions } from 'bullmq';

/**
 * The ingest queue contract, shared by the gateway (producer) and the worker (consumer). New
 * payload fields are optional so jobs already queued keep working across a deploy.
 */
export const INGEST_QUEUE = 'ingest';

export const IngestJobName = {
  /** One OTLP export, as received: the worker decodes, normalises, prices and stores it. */
  Export: 'otlp-export',
  /** Counters the gateway kept for requests that never became an export job (rate-limited, refused). */
  Accounting: 'accounting',
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

export type IngestJob = ExportJob | AccountingJob;

/**
 * Job options in one place. Transient failures (ClickHouse down) retry with exponential backoff
 * for about half an hour in all (500 ms doubling, 12 tries); poison input is failed at once with UnrecoverableError. Finished
 * jobs are kept only in bounded numbers.
 */
export const INGEST_JOB_OPTIONS: JobsOptions = {
  attempts: 12,
  backoff: { type: 'exponential', delay: 500 },
  removeOnComplete: { count: 1_000 },
  removeOnFail: { count: 10_000 },
};
