import { ZERO_SPAN_ID, ZERO_TRACE_ID } from './binary-text.codec';
import { DecodeResult, DecodedSpan, RejectReason, SpanLink } from './otlp.model';
import { isStorableTime } from './store-domain';

/*
 * Span rules (after OTLP trace.proto; shared by both decoders; ids arrive as lowercase hex of
 * whatever bytes were sent):
 * - trace id: 16 bytes, not all zero; span id: 8 bytes, not all zero.
 * - parent id: empty (root) or 8 bytes. An all-zero parent is read as "no parent": some
 *   exporters (Zipkin/Jaeger bridges, older SDKs) write zeros for roots, and rejecting them would
 *   drop whole traces for a harmless encoding choice. A span that names itself as its parent is
 *   rejected (invalid_parent_span_id): the cycle would break every tree walk downstream.
 * - start and end present (proto3 writes 0 for absent; JSON values that do not parse count as
 *   absent), both inside the store's time range (TIME_DOMAIN), and end >= start.
 * The first failed rule is the span's reason. An all-zero parent is rewritten to '' here, and an
 * event whose time is unset or outside the time range takes its span's start time (the event, an
 * exception's message often, is worth more than its clock).
 */
export function rejectReasonOf(span: DecodedSpan): RejectReason | undefined {
  if (span.traceId.length !== 32 || span.traceId === ZERO_TRACE_ID) return 'invalid_trace_id';
  if (span.spanId.length !== 16 || span.spanId === ZERO_SPAN_ID) return 'invalid_span_id';
  if (span.parentSpanId === ZERO_SPAN_ID) span.parentSpanId = '';
  else if (span.parentSpanId !== '' && (span.parentSpanId.length !== 16 || span.parentSpanId === span.spanId))
    return 'invalid_parent_span_id';
  if (span.startTimeUnixNano === 0n || span.endTimeUnixNano === 0n) return 'missing_timestamps';
  if (!isStorableTime(span.startTimeUnixNano) || !isStorableTime(span.endTimeUnixNano)) return 'timestamp_out_of_range';
  if (span.endTimeUnixNano < span.startTimeUnixNano) return 'end_before_start';
  for (const event of span.events) {
    if (event.timeUnixNano === 0n || !isStorableTime(event.timeUnixNano)) event.timeUnixNano = span.startTimeUnixNano;
  }
  return undefined;
}

/** A link needs a usable target; one without is dropped and counted in droppedLinksCount, the span stays. */
export function isValidLink(link: SpanLink): boolean {
  return link.traceId.length === 32 && link.traceId !== ZERO_TRACE_ID && link.spanId.length === 16 && link.spanId !== ZERO_SPAN_ID;
}

export function emptyDecodeResult(): DecodeResult {
  return { spans: [], received: 0, rejected: 0, rejectReasons: {} };
}

/** Counts the span as received, then keeps it or counts its reject reason. */
export function admitSpan(result: DecodeResult, span: DecodedSpan): void {
  result.received++;
  const reason = rejectReasonOf(span);
  if (reason === undefined) {
    result.spans.push(span);
    return;
  }
  result.rejected++;
  result.rejectReasons[reason] = (result.rejectReasons[reason] ?? 0) + 1;
}

/** A cut in a resource or scope concerns every span that shares it: marks the spans kept since `from`. */
export function markTruncated(spans: DecodedSpan[], from: number): void {
  for (let index = from; index < spans.length; index++) spans[index].truncated = true;
}
