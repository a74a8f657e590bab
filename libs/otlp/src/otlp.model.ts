/**
 * What the OTLP decoders produce: spans already in our shape (hex ids, bigint nanoseconds, plain
 * attribute values), with the request's resource and scope shared by reference.
 */

/**
 * An attribute value. `intValue` becomes a number when it is a safe integer, else its decimal
 * string; `bytesValue` becomes base64; `kvlistValue` an object and `arrayValue` an array (kept
 * structured); an empty AnyValue becomes null. NaN/Infinity doubles are kept as numbers.
 */
export type AttributeValue = string | number | boolean | null | AttributeValue[] | { [key: string]: AttributeValue };
export type Attributes = Record<string, AttributeValue>;

/*
 * Fields marked optional below were added after other libs started building these objects by
 * hand; the decoders always set them.
 */

export interface OtlpResource {
  attributes: Attributes;
  droppedAttributesCount: number;
  /** ResourceSpans.schema_url ('' when absent). */
  schemaUrl?: string;
}

export interface OtlpScope {
  name: string;
  version: string;
  attributes: Attributes;
  droppedAttributesCount?: number;
  /** ScopeSpans.schema_url ('' when absent): the semantic-convention version the scope wrote. */
  schemaUrl?: string;
}

export interface SpanEvent {
  timeUnixNano: bigint;
  name: string;
  attributes: Attributes;
  droppedAttributesCount?: number;
}

export interface SpanLink {
  traceId: string;
  spanId: string;
  traceState: string;
  attributes: Attributes;
  droppedAttributesCount?: number;
  /** W3C trace flags in bits 0-7, is-remote bits 8-9 (trace.proto SpanFlags), as on Span.flags. */
  flags?: number;
}

export enum SpanKind {
  UNSPECIFIED = 0,
  INTERNAL = 1,
  SERVER = 2,
  CLIENT = 3,
  PRODUCER = 4,
  CONSUMER = 5,
}

export enum StatusCode {
  UNSET = 0,
  OK = 1,
  ERROR = 2,
}

export interface DecodedSpan {
  /** 32 lowercase hex characters, never all zero. */
  traceId: string;
  /** 16 lowercase hex characters, never all zero. */
  spanId: string;
  /** 16 lowercase hex characters, or '' for a root span. */
  parentSpanId: string;
  traceState: string;
  flags: number;
  name: string;
  kind: SpanKind;
  startTimeUnixNano: bigint;
  endTimeUnixNano: bigint;
  attributes: Attributes;
  droppedAttributesCount: number;
  events: SpanEvent[];
  droppedEventsCount: number;
  links: SpanLink[];
  droppedLinksCount: number;
  statusCode: StatusCode;
  statusMessage: string;
  /** Shared by every span of the same ResourceSpans. */
  resource: OtlpResource;
  /** Shared by every span of the same ScopeSpans. */
  scope: OtlpScope;
  /** True when a cap of DecodeLimits cut attributes, events, links or a value. */
  truncated: boolean;
}

/** Why a span was rejected; counted per reason for partial_success and accounting. */
export type RejectReason =
  | 'invalid_trace_id'
  | 'invalid_span_id'
  | 'invalid_parent_span_id'
  | 'end_before_start'
  | 'missing_timestamps'
  /** A start or end time outside what the store holds (store-domain.ts TIME_DOMAIN). */
  | 'timestamp_out_of_range';

export interface DecodeLimits {
  maxAttributesPerSpan: number;
  /** Longest string value kept (UTF-16 code units); longer values are cut and the span marked truncated. */
  maxAttributeValueLength: number;
  maxEventsPerSpan: number;
  maxLinksPerSpan: number;
  maxNameLength: number;
}

export const DEFAULT_DECODE_LIMITS: DecodeLimits = {
  maxAttributesPerSpan: 512,
  maxAttributeValueLength: 256 * 1024,
  maxEventsPerSpan: 1024,
  maxLinksPerSpan: 128,
  maxNameLength: 1024,
};

export interface DecodeResult {
  spans: DecodedSpan[];
  /** Spans seen in the request, accepted or not. */
  received: number;
  rejected: number;
  rejectReasons: Partial<Record<RejectReason, number>>;
}

/** The whole body cannot be used (HTTP 400 / gRPC INVALID_ARGUMENT); the message is for the sender. */
export class OtlpDecodeError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'OtlpDecodeError';
  }
}
