import { OtlpDecodeError } from './otlp.model';
import { I32, I64, LEN, MessageSchema, VARINT, WireReader } from './wire.reader';

/*
 * Logs and metrics exports share the outer field numbers of the trace request (Resource* = 1,
 * Scope* = 2, their items = 2), so a logs or metrics export sent to /v1/traces decodes as spans
 * without ids or fails deep inside a "Span". When trace decoding fails, or rejects every span, we
 * look at the first item once more to tell the sender what they sent instead.
 */

export type OtherSignal = 'logs' | 'metrics';

const ANY_MESSAGE: MessageSchema = { name: 'message', fields: {} };

const ADVICE: Record<OtherSignal, string> = {
  logs: 'this looks like an OTLP logs export (ExportLogsServiceRequest: resourceLogs/logRecords) sent to the traces endpoint: send logs to /v1/logs (OTEL_EXPORTER_OTLP_LOGS_ENDPOINT, or OTEL_EXPORTER_OTLP_ENDPOINT for all signals)',
  metrics:
    'this looks like an OTLP metrics export (ExportMetricsServiceRequest: resourceMetrics/metrics) sent to the traces endpoint: send metrics to /v1/metrics (OTEL_EXPORTER_OTLP_METRICS_ENDPOINT, or OTEL_EXPORTER_OTLP_ENDPOINT for all signals)',
};

export function otherSignalError(signal: OtherSignal): OtlpDecodeError {
  return new OtlpDecodeError(ADVICE[signal]);
}

/** Which other signal the protobuf body most likely is, or undefined when it does not look like one. */
export function sniffOtherSignal(bytes: Uint8Array): OtherSignal | undefined {
  try {
    const reader = new WireReader(bytes);
    const item = firstItem(reader);
    return item === undefined ? undefined : classifyItem(reader, item);
  } catch {
    // A body too broken to walk keeps the trace decoder's own error.
    return undefined;
  }
}

/** End offset of the first Resource*[1] → Scope*[2] → item[2] payload; the reader is left at its start. */
function firstItem(reader: WireReader): number | undefined {
  const end = reader.length;
  while (reader.pos < end) {
    const tag = reader.uint32('request');
    if (tag !== 0x0a) {
      reader.skipField(tag, ANY_MESSAGE, end);
      continue;
    }
    const resourceEnd = reader.lengthEnd('resource', end);
    while (reader.pos < resourceEnd) {
      const resourceTag = reader.uint32('resource');
      if (resourceTag !== 0x12) {
        reader.skipField(resourceTag, ANY_MESSAGE, resourceEnd);
        continue;
      }
      const scopeEnd = reader.lengthEnd('scope', resourceEnd);
      while (reader.pos < scopeEnd) {
        const scopeTag = reader.uint32('scope');
        if (scopeTag === 0x12) return reader.lengthEnd('item', scopeEnd);
        reader.skipField(scopeTag, ANY_MESSAGE, scopeEnd);
      }
    }
  }
  return undefined;
}

/**
 * LogRecord: time_unix_nano = 1 and observed_time_unix_nano = 11 are fixed64, severity_number = 2
 * a varint, attributes = 6 and flags = 8 (I32): no Span field has those wire types.
 * Metric: name = 1, description = 2, then data in gauge = 5, sum = 7, histogram = 9,
 * exponential_histogram = 10 or summary = 11, each a message whose data_points = 1 comes first.
 * sum and exponential_histogram clash with Span's wire types; for the others we also need the
 * ids to be wrong (a name is rarely exactly 16 bytes) and no span timestamps.
 */
function classifyItem(reader: WireReader, end: number): OtherSignal | undefined {
  let hasSpanTimes = false;
  let idsLookLikeSpan = false;
  let dataLikeMetric = false;
  while (reader.pos < end) {
    const tag = reader.uint32('item');
    const field = tag >>> 3;
    const wireType = tag & 7;
    if (
      (wireType === I64 && (field === 1 || field === 11)) ||
      (wireType === VARINT && field === 2) ||
      (wireType === LEN && field === 6) ||
      (wireType === I32 && field === 8)
    ) {
      return 'logs';
    }
    if (wireType === LEN && (field === 7 || field === 10)) return 'metrics';
    if (wireType === I64 && (field === 7 || field === 8)) hasSpanTimes = true;
    if (wireType !== LEN) {
      reader.skipField(tag, ANY_MESSAGE, end);
      continue;
    }
    const payloadEnd = reader.lengthEnd('item field', end);
    const length = payloadEnd - reader.pos;
    if ((field === 1 && length === 16) || (field === 2 && length === 8)) idsLookLikeSpan = true;
    if ((field === 5 || field === 9 || field === 11) && length > 0 && reader.bytes[reader.pos] === 0x0a) dataLikeMetric = true;
    reader.pos = payloadEnd;
  }
  return dataLikeMetric && !hasSpanTimes && !idsLookLikeSpan ? 'metrics' : undefined;
}
