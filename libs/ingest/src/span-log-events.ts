import type { CompiledPolicy } from '@spanforge/policy';
import { createHash } from 'node:crypto';
import { insertLines, type ClickHouseClient } from '@spanforge/clickhouse';
import { OtlpDecodeError, decodeJsonLogs, decodeProtobufLogs, isStorableTime, type LogsDecodeResult } from '@spanforge/otlp';
import { unpackExportBody, type ExportJob } from '@spanforge/queue';
import { genAiEventContent } from '@spanforge/semconv';
import { PoisonExportError, keptSinceNs } from './export-rows';
import { nanosToDateTime64, stringMap } from './span.row';

/** One row of `span_log_events` (infra/clickhouse/011_span_log_events.sql). */
export interface SpanLogEventRow {
  tenant_id: string;
  project_id: string;
  trace_id: string;
  span_id: string;
  time: string;
  name: string;
  /** Decimal UInt64: the first 8 bytes of a SHA-256 of the record's content. */
  record_hash: string;
  seq: number;
  attributes: Record<string, string>;
  input: string;
  output: string;
  /** The project's retention when the event was written (0: kept until erased). */
  retention_days: number;
}

const NS_PER_MS = 1_000_000n;

/**
 * The GenAI events of a logs export as rows, each given to the span it was emitted in. A record
 * without a time (or with one the store cannot hold) takes the moment the gateway received it.
 */
export function logEventRows(job: ExportJob, policy?: CompiledPolicy): { rows: SpanLogEventRow[]; received: number; dropped: number } {
  let result: LogsDecodeResult;
  try {
    const body = unpackExportBody(job);
    result = job.format === 'protobuf' ? decodeProtobufLogs(body) : decodeJsonLogs(body);
  } catch (error) {
    if (error instanceof OtlpDecodeError) throw new PoisonExportError(`logs export ${job.exportId} cannot be decoded: ${error.message}`);
    throw error;
  }
  const received = BigInt(job.receivedAt) * NS_PER_MS;
  const keptSince = keptSinceNs(job, policy);
  const retention = policy?.policy.retentionDays ?? 0;
  const rows: SpanLogEventRow[] = [];
  let expired = 0;
  for (const [seq, record] of result.events.entries()) {
    const time = record.timeUnixNano !== 0n && isStorableTime(record.timeUnixNano) ? record.timeUnixNano : received;
    // Past the project's retention when it arrived, like a span: not stored.
    if (keptSince !== undefined && time < keptSince) {
      expired++;
      continue;
    }
    const content = genAiEventContent(record.eventName, record.body, record.attributes);
    const attributes = stringMap(content.attributes);
    const event = { name: record.eventName, attributes, input: content.input, output: content.output };
    // The policy before the content hash: a re-sent record, redacted the same way, collapses with its copy.
    if (policy && !policy.isNoop) policy.applyToLogEvent(event);
    rows.push({
      tenant_id: job.tenantId,
      project_id: job.projectId,
      trace_id: record.traceId,
      span_id: record.spanId,
      time: nanosToDateTime64(time),
      name: record.eventName,
      record_hash: contentHash(record.eventName, event.attributes, event.input, event.output),
      seq,
      attributes: event.attributes,
      input: event.input,
      output: event.output,
      retention_days: retention,
    });
  }
  return { rows, received: result.received, dropped: result.dropped + expired };
}

function contentHash(name: string, attributes: Record<string, string>, input: string, output: string): string {
  const digest = createHash('sha256')
    .update(JSON.stringify([name, attributes, input, output]))
    .digest();
  return digest.readBigUInt64BE(0).toString();
}

/** The write of GenAI log events; bound to the project its rows name. */
export class SpanLogEventRepository {
  constructor(private readonly client: ClickHouseClient) {}

  async insert(rows: SpanLogEventRow[]): Promise<void> {
    if (rows.length === 0) return;
    // Records of one export may span many months (one partition each); an export is small enough for any number.
    await insertLines(
      this.client,
      'INSERT INTO span_log_events SETTINGS max_partitions_per_insert_block = 0 FORMAT JSONEachRow',
      [rows.map((row) => `${JSON.stringify(row)}\n`).join('')],
      'ingest.insert_span_log_events',
    );
  }
}
