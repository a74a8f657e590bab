import { DecodeResult, RejectReason } from './otlp.model';
import { WireWriter } from './wire.writer';

/** The OTLP spec: a response uses the request's encoding. */
export type ResponseFormat = 'protobuf' | 'json';

/** google.rpc.Code (googleapis google/rpc/code.proto), the `code` of a Status and the gRPC status. */
export enum RpcCode {
  OK = 0,
  CANCELLED = 1,
  UNKNOWN = 2,
  INVALID_ARGUMENT = 3,
  DEADLINE_EXCEEDED = 4,
  NOT_FOUND = 5,
  ALREADY_EXISTS = 6,
  PERMISSION_DENIED = 7,
  RESOURCE_EXHAUSTED = 8,
  FAILED_PRECONDITION = 9,
  ABORTED = 10,
  OUT_OF_RANGE = 11,
  UNIMPLEMENTED = 12,
  INTERNAL = 13,
  UNAVAILABLE = 14,
  DATA_LOSS = 15,
  UNAUTHENTICATED = 16,
}

/** Status details we send: RetryInfo makes RESOURCE_EXHAUSTED retryable (OTLP clients retry it only with one), BadRequest explains INVALID_ARGUMENT. */
export type StatusDetail =
  { type: 'retry_info'; retryDelayMs: number } | { type: 'bad_request'; fieldViolations: { field: string; description: string }[] };

/**
 * The OTLP spec: a response should stay under 4 MiB, shortening partial_success.error_message if
 * needed.
 * 64 Ki UTF-16 units are at most 192 KiB of UTF-8, far below that and still a readable message.
 */
export const MAX_RESPONSE_MESSAGE_LENGTH = 64 * 1024;

const RETRY_INFO_TYPE = 'type.googleapis.com/google.rpc.RetryInfo';
const BAD_REQUEST_TYPE = 'type.googleapis.com/google.rpc.BadRequest';

/** The three OTLP export services; their responses differ only in the name of the rejected count. */
export type OtlpSignal = 'traces' | 'logs' | 'metrics';

/** partial_success.rejected_* (field 1, int64, in every signal) by its proto3 JSON name. */
const REJECTED_FIELD: Record<OtlpSignal, string> = { traces: 'rejectedSpans', logs: 'rejectedLogRecords', metrics: 'rejectedDataPoints' };

/**
 * Export*ServiceResponse. Full success (rejected 0, no message) leaves partial_success unset: an
 * empty protobuf body, `{}` in JSON. The rejected count is int64, a string in JSON.
 */
export function encodeExportResponse(format: 'protobuf', rejected: number, errorMessage?: string, signal?: OtlpSignal): Uint8Array;
export function encodeExportResponse(format: 'json', rejected: number, errorMessage?: string, signal?: OtlpSignal): string;
export function encodeExportResponse(
  format: ResponseFormat,
  rejected: number,
  errorMessage?: string,
  signal?: OtlpSignal,
): Uint8Array | string;
export function encodeExportResponse(
  format: ResponseFormat,
  rejected: number,
  errorMessage = '',
  signal: OtlpSignal = 'traces',
): Uint8Array | string {
  const message = shorten(errorMessage);
  const unset = rejected === 0 && message === '';
  if (format === 'json') {
    return unset ? '{}' : JSON.stringify({ partialSuccess: { [REJECTED_FIELD[signal]]: String(rejected), errorMessage: message } });
  }
  const response = new WireWriter();
  if (unset) return response.finish();
  const partialSuccess = new WireWriter();
  if (rejected !== 0) partialSuccess.varint(1, rejected); // rejected_spans / rejected_log_records / rejected_data_points = 1, int64
  if (message !== '') partialSuccess.string(2, message); // error_message = 2
  return response.message(1, partialSuccess).finish(); // partial_success = 1
}

/**
 * google.rpc.Status {code = 1 int32, message = 2, details = 3 repeated Any}: the body of every
 * OTLP/HTTP failure and the gRPC `grpc-status-details-bin` trailer.
 */
export function encodeStatus(format: 'protobuf', code: number, message: string, details?: StatusDetail[]): Uint8Array;
export function encodeStatus(format: 'json', code: number, message: string, details?: StatusDetail[]): string;
export function encodeStatus(format: ResponseFormat, code: number, message: string, details?: StatusDetail[]): Uint8Array | string;
export function encodeStatus(format: ResponseFormat, code: number, message: string, details: StatusDetail[] = []): Uint8Array | string {
  const shortMessage = shorten(message);
  if (format === 'json') {
    const status: Record<string, unknown> = { code, message: shortMessage };
    if (details.length > 0) status.details = details.map(detailJson);
    return JSON.stringify(status);
  }
  const status = new WireWriter();
  if (code !== 0) status.varint(1, code);
  if (shortMessage !== '') status.string(2, shortMessage);
  for (const detail of details) {
    // google.protobuf.Any {type_url = 1, value = 2}
    const any = new WireWriter().string(1, detail.type === 'retry_info' ? RETRY_INFO_TYPE : BAD_REQUEST_TYPE).bytes(2, detailBytes(detail));
    status.message(3, any);
  }
  return status.finish();
}

/** google.rpc.RetryInfo {retry_delay = 1 google.protobuf.Duration {seconds = 1 int64, nanos = 2 int32}}. */
export function encodeRetryInfo(retryDelayMs: number): Uint8Array {
  const { seconds, nanos } = durationOf(retryDelayMs);
  const duration = new WireWriter();
  if (seconds !== 0) duration.varint(1, seconds);
  if (nanos !== 0) duration.varint(2, nanos);
  return new WireWriter().message(1, duration).finish();
}

/** google.rpc.BadRequest {field_violations = 1 repeated FieldViolation {field = 1, description = 2}}. */
function encodeBadRequest(fieldViolations: { field: string; description: string }[]): Uint8Array {
  const badRequest = new WireWriter();
  for (const violation of fieldViolations)
    badRequest.message(1, new WireWriter().string(1, violation.field).string(2, shorten(violation.description)));
  return badRequest.finish();
}

function detailBytes(detail: StatusDetail): Uint8Array {
  return detail.type === 'retry_info' ? encodeRetryInfo(detail.retryDelayMs) : encodeBadRequest(detail.fieldViolations);
}

/** proto3 JSON of an Any: the message's fields next to "@type"; a Duration is "<seconds>[.fraction]s". */
function detailJson(detail: StatusDetail): Record<string, unknown> {
  if (detail.type === 'bad_request') {
    return {
      '@type': BAD_REQUEST_TYPE,
      fieldViolations: detail.fieldViolations.map(({ field, description }) => ({ field, description: shorten(description) })),
    };
  }
  const { seconds, nanos } = durationOf(detail.retryDelayMs);
  const fraction = nanos === 0 ? '' : `.${String(nanos / 1e6).padStart(3, '0')}`;
  return { '@type': RETRY_INFO_TYPE, retryDelay: `${seconds}${fraction}s` };
}

/** Whole milliseconds as a Duration; negative delays mean "now". */
function durationOf(milliseconds: number): { seconds: number; nanos: number } {
  const whole = Math.max(0, Math.round(milliseconds));
  return { seconds: Math.floor(whole / 1000), nanos: (whole % 1000) * 1e6 };
}

function shorten(message: string): string {
  if (message.length <= MAX_RESPONSE_MESSAGE_LENGTH) return message;
  let end = MAX_RESPONSE_MESSAGE_LENGTH - 1;
  const last = message.charCodeAt(end - 1);
  if (last >= 0xd800 && last <= 0xdbff) end--; // keep surrogate pairs whole
  return `${message.slice(0, end)}…`;
}

/**
 * The English partial_success.error_message for a decode result, reasons by count:
 * "3 spans rejected: 2 invalid_trace_id, 1 end_before_start". '' when nothing was rejected.
 */
export function describeRejections(result: Pick<DecodeResult, 'rejected' | 'rejectReasons'>): string {
  if (result.rejected === 0) return '';
  const reasons = (Object.entries(result.rejectReasons) as [RejectReason, number][])
    .filter(([, count]) => count > 0)
    .sort(([reasonA, countA], [reasonB, countB]) => countB - countA || reasonA.localeCompare(reasonB))
    .map(([reason, count]) => `${count} ${reason}`);
  return `${result.rejected} ${result.rejected === 1 ? 'span' : 'spans'} rejected: ${reasons.join(', ')}`;
}
