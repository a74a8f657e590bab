import { SpanKind, StatusCode } from './otlp.model';

/*
 * proto3 keeps enum values it does not know; ours are closed, so anything outside the known range
 * reads as UNSPECIFIED / UNSET rather than leaking a number no consumer handles.
 */

export function spanKindOf(value: number): SpanKind {
  return value >= SpanKind.UNSPECIFIED && value <= SpanKind.CONSUMER ? value : SpanKind.UNSPECIFIED;
}

export function statusCodeOf(value: number): StatusCode {
  return value >= StatusCode.UNSET && value <= StatusCode.ERROR ? value : StatusCode.UNSET;
}

/**
 * A JSON enum: the OTLP spec requires integers, but hand-rolled exporters send names, so accept the
 * integer, its decimal string, the full name (`SPAN_KIND_SERVER`) or the short one (`server`).
 */
export function spanKindOfJson(value: unknown): SpanKind {
  return spanKindOf(enumNumberOfJson(value, 'SPAN_KIND_', SpanKind));
}

export function statusCodeOfJson(value: unknown): StatusCode {
  return statusCodeOf(enumNumberOfJson(value, 'STATUS_CODE_', StatusCode));
}

function enumNumberOfJson(value: unknown, prefix: string, names: Record<string, string | number>): number {
  if (typeof value === 'number') return Number.isInteger(value) ? value : 0;
  if (typeof value !== 'string') return 0;
  if (/^\d+$/.test(value)) return Number(value);
  const upper = value.toUpperCase();
  const number = names[upper.startsWith(prefix) ? upper.slice(prefix.length) : upper];
  return typeof number === 'number' ? number : 0;
}
