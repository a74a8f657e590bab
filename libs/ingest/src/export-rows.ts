import type { CompiledPolicy } from '@spanforge/policy';
import { OtlpDecodeError, decodeJsonExport, decodeProtobufExport, type DecodeResult } from '@spanforge/otlp';
import { PriceTable, priceSpan, type PriceOverride } from '@spanforge/pricing';
import { unpackExportBody, type ExportJob } from '@spanforge/queue';
import { isUpgradableRoot, normalizeSpan, type NormalizedSpan } from '@spanforge/semconv';
import type { AccountingRow } from './span.repository';
import { conformRow, serialiseRow } from './span.columns';
import { spanPartition, toSpanRow, type SpanPrice, type SpanRow } from './span.row';

/** The rows of one chunk in one partition of the spans table (spanPartition). */
export interface ChunkPart {
  /** The partition's id (spanPartition): its rows' start month, or the week they expire in. */
  partition: number;
  /**
   * JSONEachRow lines, one a row, each in UTF-8 and ending in '\n': bytes a line, not one string
   * of the part (docs/architecture.md, "In the worker", step 4).
   */
  lines: Buffer[];
}

/**
 * The rows of one export, already serialised as JSONEachRow lines and grouped by partition (an
 * insert may touch only so many partitions): everything CPU-bound between a queue job and the
 * ClickHouse insert.
 */
export interface RowChunk {
  tenantId: string;
  projectId: string;
  /** The export's id ('' for rows the upkeep writes again): dead letters and their accounting name it. */
  exportId: string;
  /** Start of the minute the gateway took the export, seconds since the epoch (accounting's minute). */
  minute: number;
  /** By partition; emptied by the writer once inserted. */
  parts: ChunkPart[];
  rows: number;
  /** The export's trace ids, each once. */
  traces: string[];
  /** The session ids its rows name, each once: the sessions rollup rows its insert writes. */
  sessions: string[];
  /**
   * Traces whose root comes in this export typed as something a GenAI trace's root is not
   * (isUpgradableRoot): the upkeep writes it again as RUN if the stored trace is GenAI, even
   * when an earlier copy of the root already was (a retried export must not undo that).
   */
  plainRoots: string[];
  accounting: AccountingRow[];
  /** Columns conformRow had to change, with the rows it changed (a bug to look at; the rows are stored). */
  conversions: Map<string, number>;
  /** Values the project's data policy redacted in these rows. */
  redactions: number;
  /**
   * The job of these rows ran before (a retry, or taken over from a worker that died): its traces'
   * upkeep may have stopped part-way, so the round looks up where they are filed instead of
   * trusting what their figures say (SpanRepository.refreshTraceFigures).
   */
  rerun?: boolean;
}

/** The export cannot be decoded: retrying will not help (the job is poison). */
export class PoisonExportError extends Error {}

const NO_PRICE: SpanPrice = { costUsd: 0, costSource: '', priceVersion: '' };
const bundled = PriceTable.bundled();
const tables = new Map<string, PriceTable>();

/** The bundled table with a project's overrides; tables are kept per override set (a handful per process). */
function priceTableFor(overrides: PriceOverride[]): PriceTable {
  if (overrides.length === 0) return bundled;
  const key = JSON.stringify(overrides);
  let table = tables.get(key);
  if (!table) {
    if (tables.size > 1_000) tables.clear();
    tables.set(key, (table = bundled.withOverrides(overrides)));
  }
  return table;
}

function priceOf(span: NormalizedSpan, startTimeUnixNano: bigint, table: PriceTable): SpanPrice {
  const { usage } = span;
  // Spans without usage or a stated cost have nothing to price (and are not "unpriced models").
  if (usage.inputUncached + usage.cacheRead + usage.cacheWrite + usage.output + usage.reasoning === 0 && span.explicitCostUsd === undefined)
    return NO_PRICE;
  return priceSpan(
    {
      pricingModel: span.pricingModel,
      provider: span.provider,
      usage,
      explicitCostUsd: span.explicitCostUsd,
      startTime: startTimeUnixNano,
    },
    table,
  );
}

const NS_PER_DAY = 86_400_000_000_000n;

/**
 * The start time before which the project's retention no longer keeps a span that reached the
 * gateway at `receivedAt` (ns since the epoch), or undefined when it keeps everything. Taken from
 * when the export arrived, not when a worker gets to it, so every retry of an export decides alike.
 */
export function keptSinceNs(job: Pick<ExportJob, 'receivedAt'>, policy: CompiledPolicy | undefined): bigint | undefined {
  const days = policy?.policy.retentionDays;
  return days === null || days === undefined ? undefined : BigInt(job.receivedAt) * 1_000_000n - BigInt(days) * NS_PER_DAY;
}

/**
 * An export's span rows, normalised, priced, and with the project's data policy applied (when it
 * has one that changes anything) before they are serialised: nothing of what the policy removes
 * reaches storage, the dead letters included.
 */
export function exportRows(job: ExportJob, overrides: PriceOverride[], policy?: CompiledPolicy): RowChunk {
  let result: DecodeResult;
  try {
    const body = unpackExportBody(job);
    result = job.format === 'protobuf' ? decodeProtobufExport(body) : decodeJsonExport(body.toString('utf8'));
  } catch (error) {
    if (error instanceof OtlpDecodeError) throw new PoisonExportError(`export ${job.exportId} cannot be decoded: ${error.message}`);
    throw error;
  }
  const table = priceTableFor(overrides);
  const rows: SpanRow[] = [];
  const starts: bigint[] = [];
  const keptSince = keptSinceNs(job, policy);
  let dropped = 0;
  let expired = 0;
  for (const span of result.spans) {
    // Already past the project's retention when it arrived: not stored, counted as rejected.
    if (keptSince !== undefined && span.startTimeUnixNano < keptSince) {
      expired++;
      continue;
    }
    const normalized = normalizeSpan(span);
    if (normalized.drop) {
      dropped++;
      continue;
    }
    rows.push(toSpanRow(job.tenantId, job.projectId, span, normalized, priceOf(normalized, span.startTimeUnixNano, table)));
    starts.push(span.startTimeUnixNano);
  }
  shareSessions(rows);
  const retention = policy?.policy.retentionDays ?? 0;
  for (const row of rows) row.retention_days = retention;
  let redactions = 0;
  if (policy && !policy.isNoop) for (const row of rows) redactions += row.redactions = policy.applyToSpan(row);
  const parts = new Map<number, ChunkPart>();
  const traces = new Set<string>();
  const sessions = new Set<string>();
  const plainRoots: string[] = [];
  const conversions = new Map<string, number>();
  for (let index = 0; index < rows.length; index++) {
    const row = rows[index];
    for (const column of conformRow(row)) conversions.set(column, (conversions.get(column) ?? 0) + 1);
    const partition = spanPartition(starts[index]!, row.retention_days);
    let part = parts.get(partition);
    if (!part) parts.set(partition, (part = { partition, lines: [] }));
    part.lines.push(Buffer.from(`${serialiseRow(row)}\n`));
    traces.add(row.trace_id);
    if (row.session_id !== '') sessions.add(row.session_id);
    if (row.parent_span_id === '' && isUpgradableRoot(row.span_type)) plainRoots.push(row.trace_id);
  }
  return {
    tenantId: job.tenantId,
    projectId: job.projectId,
    exportId: job.exportId,
    minute: accountingMinute(job),
    parts: [...parts.values()],
    rows: rows.length,
    traces: [...traces],
    sessions: [...sessions],
    plainRoots,
    accounting: accountingRows(job, result, dropped, expired),
    conversions,
    redactions,
  };
}

/** Within one export, every span of a trace gets the session some span of that trace names. */
function shareSessions(rows: SpanRow[]): void {
  const sessions = new Map<string, string>();
  for (const row of rows) if (row.session_id !== '') sessions.set(row.trace_id, row.session_id);
  if (sessions.size === 0) return;
  for (const row of rows) if (row.session_id === '') row.session_id = sessions.get(row.trace_id) ?? '';
}

/** Start of the minute the gateway took the export, in seconds: the minute its accounting rows count in. */
export function accountingMinute(job: Pick<ExportJob, 'receivedAt'>): number {
  return Math.floor(job.receivedAt / 60_000) * 60;
}

/**
 * received / accepted / rejected-by-reason for one export, keyed by its id so a retry rewrites
 * them. Spans the gateway validated but the project's retention no longer keeps are rejected as
 * `expired`.
 */
function accountingRows(job: ExportJob, result: DecodeResult, dropped: number, expired: number): AccountingRow[] {
  const base = { tenant_id: job.tenantId, project_id: job.projectId, minute: accountingMinute(job), batch_id: job.exportId };
  const rows: AccountingRow[] = [
    { ...base, outcome: 'received', reason: '', requests: 1, spans: result.received, bytes: job.bytes },
    { ...base, outcome: 'accepted', reason: '', requests: 1, spans: result.spans.length - dropped - expired, bytes: 0 },
  ];
  const rejected: Record<string, number> = { ...result.rejectReasons };
  if (expired > 0) rejected['expired'] = (rejected['expired'] ?? 0) + expired;
  for (const [reason, spans] of Object.entries(rejected)) {
    if (spans) rows.push({ ...base, outcome: 'rejected', reason, requests: 1, spans, bytes: 0 });
  }
  // Placeholders (Logfire pending spans) are valid but not stored: counted apart from rejections.
  if (dropped > 0) rows.push({ ...base, outcome: 'dropped', reason: 'pending_span', requests: 1, spans: dropped, bytes: 0 });
  return rows;
}
