import { decodeJsonExport, decodeJsonLogs, decodeProtobufExport, decodeProtobufLogs } from '@spanforge/otlp';
import { unpackExportBody, type ExportJob } from '@spanforge/queue';
import type { DeadLetter } from './dead-letter.repository';

/**
 * Whether a dead letter holds content of one of `traces` (lowercase hex trace ids) or of one of
 * `sessions`, so an erasure removes it (docs/data-policy.md, "Erasure").
 *
 * - A span row names its trace and session (one that is not JSON is searched for the trace ids).
 * - An export job is decoded as the worker would decode it, and each of its spans (or GenAI log
 *   records) names its trace. An export that cannot be decoded (why it was dead-lettered, often)
 *   is searched as bytes for each trace id as OTLP writes it: 16 raw bytes (protobuf), hex in any
 *   case, or base64 (JSON).
 * - An accounting job holds counts only.
 */
export function letterHoldsErased(
  letter: Pick<DeadLetter, 'kind' | 'payload'>,
  traces: ReadonlySet<string>,
  sessions: ReadonlySet<string> = new Set(),
): boolean {
  if (letter.kind === 'span_row') {
    const row = parseObject(letter.payload);
    if (row === undefined) return [...traces].some((traceId) => letter.payload.includes(traceId));
    return traces.has(String(row.trace_id ?? '')) || sessions.has(String(row.session_id ?? ''));
  }
  if (letter.kind !== 'export_job') return false;
  const job = parseObject(letter.payload)?.data as ExportJob | undefined;
  if (typeof job?.body !== 'string') return false;
  let body: Buffer;
  try {
    body = unpackExportBody(job);
  } catch {
    // Not zstd after all: the body as sent.
    body = Buffer.from(job.body, 'base64');
  }
  const decoded = decodedTraceIds(job, body);
  if (decoded !== undefined) return decoded.some((traceId) => traces.has(traceId));
  const text = body.toString('latin1').toLowerCase();
  for (const traceId of traces) {
    const bytes = Buffer.from(traceId, 'hex');
    if (body.includes(bytes) || text.includes(traceId)) return true;
    // base64 and base64url, padded or not: the first 21 characters carry 126 of the 128 bits.
    if (body.includes(bytes.toString('base64').slice(0, 21)) || body.includes(bytes.toString('base64url').slice(0, 21))) return true;
  }
  return false;
}

/** The trace ids of an export's spans or log records, or undefined when it cannot be decoded. */
function decodedTraceIds(job: ExportJob, body: Buffer): string[] | undefined {
  try {
    if (job.signal === 'logs') {
      const logs = job.format === 'protobuf' ? decodeProtobufLogs(body) : decodeJsonLogs(JSON.parse(body.toString('utf8')));
      return logs.events.map((event) => event.traceId);
    }
    const result = job.format === 'protobuf' ? decodeProtobufExport(body) : decodeJsonExport(body.toString('utf8'));
    return result.spans.map((span) => span.traceId);
  } catch {
    // Undecodable: the caller searches the bytes instead.
    return undefined;
  }
}

function parseObject(text: string): Record<string, unknown> | undefined {
  try {
    const value: unknown = JSON.parse(text);
    return typeof value === 'object' && value !== null ? (value as Record<string, unknown>) : undefined;
  } catch {
    // Not JSON (cut short, or written by hand): the caller searches the text instead.
    return undefined;
  }
}
