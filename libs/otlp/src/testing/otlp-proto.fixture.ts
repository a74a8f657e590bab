/**
 * protobufjs (an independent protobuf implementation) with the OTLP and google.rpc messages, for
 * input the OTel serializers never write (int64 extremes, unknown fields, the old field 1000,
 * profiles-only strindex fields) and to read back what our encoders write. Spec files only.
 */
import { Root, Type, Writer } from 'protobufjs';
import { nextId } from './otel-span.fixture';

const repeated = (type: string, id: number) => ({ rule: 'repeated', type, id });
const one = (type: string, id: number) => ({ type, id });

const otlp = {
  nested: {
    ExportTraceServiceRequest: { fields: { resourceSpans: repeated('ResourceSpans', 1) } },
    ResourceSpans: {
      fields: {
        resource: one('Resource', 1),
        scopeSpans: repeated('ScopeSpans', 2),
        schemaUrl: one('string', 3),
        instrumentationLibrarySpans: repeated('ScopeSpans', 1000),
      },
    },
    Resource: {
      fields: { attributes: repeated('KeyValue', 1), droppedAttributesCount: one('uint32', 2), entityRefs: repeated('EntityRef', 3) },
    },
    EntityRef: { fields: { schemaUrl: one('string', 1), type: one('string', 2), idKeys: repeated('string', 3) } },
    ScopeSpans: { fields: { scope: one('InstrumentationScope', 1), spans: repeated('Span', 2), schemaUrl: one('string', 3) } },
    InstrumentationScope: {
      fields: {
        name: one('string', 1),
        version: one('string', 2),
        attributes: repeated('KeyValue', 3),
        droppedAttributesCount: one('uint32', 4),
      },
    },
    Span: {
      fields: {
        traceId: one('bytes', 1),
        spanId: one('bytes', 2),
        traceState: one('string', 3),
        parentSpanId: one('bytes', 4),
        name: one('string', 5),
        kind: one('int32', 6),
        startTimeUnixNano: one('fixed64', 7),
        endTimeUnixNano: one('fixed64', 8),
        attributes: repeated('KeyValue', 9),
        droppedAttributesCount: one('uint32', 10),
        events: repeated('Event', 11),
        droppedEventsCount: one('uint32', 12),
        links: repeated('Link', 13),
        droppedLinksCount: one('uint32', 14),
        status: one('Status', 15),
        flags: one('fixed32', 16),
      },
    },
    Event: {
      fields: {
        timeUnixNano: one('fixed64', 1),
        name: one('string', 2),
        attributes: repeated('KeyValue', 3),
        droppedAttributesCount: one('uint32', 4),
      },
    },
    Link: {
      fields: {
        traceId: one('bytes', 1),
        spanId: one('bytes', 2),
        traceState: one('string', 3),
        attributes: repeated('KeyValue', 4),
        droppedAttributesCount: one('uint32', 5),
        flags: one('fixed32', 6),
      },
    },
    Status: { fields: { message: one('string', 2), code: one('int32', 3) } },
    KeyValue: { fields: { key: one('string', 1), value: one('AnyValue', 2), keyStrindex: one('int32', 3) } },
    AnyValue: {
      oneofs: {
        value: {
          oneof: ['stringValue', 'boolValue', 'intValue', 'doubleValue', 'arrayValue', 'kvlistValue', 'bytesValue', 'stringValueStrindex'],
        },
      },
      fields: {
        stringValue: one('string', 1),
        boolValue: one('bool', 2),
        intValue: one('int64', 3),
        doubleValue: one('double', 4),
        arrayValue: one('ArrayValue', 5),
        kvlistValue: one('KeyValueList', 6),
        bytesValue: one('bytes', 7),
        stringValueStrindex: one('int32', 8),
      },
    },
    ArrayValue: { fields: { values: repeated('AnyValue', 1) } },
    KeyValueList: { fields: { values: repeated('KeyValue', 1) } },
    ExportTraceServiceResponse: { fields: { partialSuccess: one('ExportTracePartialSuccess', 1) } },
    ExportTracePartialSuccess: { fields: { rejectedSpans: one('int64', 1), errorMessage: one('string', 2) } },
  },
};

const google = {
  nested: {
    rpc: {
      nested: {
        Status: { fields: { code: one('int32', 1), message: one('string', 2), details: repeated('google.protobuf.Any', 3) } },
        RetryInfo: { fields: { retryDelay: one('google.protobuf.Duration', 1) } },
        BadRequest: { fields: { fieldViolations: repeated('FieldViolation', 1) } },
        FieldViolation: { fields: { field: one('string', 1), description: one('string', 2) } },
      },
    },
    protobuf: {
      nested: {
        Any: { fields: { typeUrl: one('string', 1), value: one('bytes', 2) } },
        Duration: { fields: { seconds: one('int64', 1), nanos: one('int32', 2) } },
      },
    },
  },
};

const root = Root.fromJSON({ nested: { otlp, google } });

export type OtlpMessageName =
  | 'otlp.ExportTraceServiceRequest'
  | 'otlp.Span'
  | 'otlp.KeyValue'
  | 'otlp.AnyValue'
  | 'otlp.ExportTraceServiceResponse'
  | 'google.rpc.Status'
  | 'google.rpc.RetryInfo'
  | 'google.rpc.BadRequest';

export function messageType(name: OtlpMessageName): Type {
  return root.lookupType(name);
}

/** Encodes a plain object (int64 as decimal strings, bytes as Uint8Array) with protobufjs. */
export function encodeMessage(name: OtlpMessageName, object: Record<string, unknown>): Uint8Array {
  const type = messageType(name);
  return type.encode(type.fromObject(object)).finish();
}

/** Decodes with protobufjs into a plain object: int64 as strings, bytes as base64, defaults omitted. */
export function decodeMessage(name: OtlpMessageName, bytes: Uint8Array): Record<string, unknown> {
  const type = messageType(name);
  return type.toObject(type.decode(bytes), { longs: String, bytes: String });
}

export function hexBytes(hex: string): Uint8Array {
  return Uint8Array.from(Buffer.from(hex, 'hex'));
}

export function concatBytes(...parts: Uint8Array[]): Uint8Array {
  return Uint8Array.from(Buffer.concat(parts));
}

/** A LEN field: tag, length, payload. */
export function lengthDelimited(field: number, payload: Uint8Array): Uint8Array {
  return Writer.create()
    .uint32((field << 3) | 2)
    .bytes(payload)
    .finish();
}

/** A request of one ResourceSpans with one ScopeSpans holding the given (raw) Span messages. */
export function requestOfSpans(...spans: Uint8Array[]): Uint8Array {
  const scopeSpans = concatBytes(...spans.map((span) => lengthDelimited(2, span)));
  return lengthDelimited(1, lengthDelimited(2, scopeSpans));
}

/** Fields of every wire type a decoder must skip: varint, fixed64, LEN, fixed32, at field numbers no OTLP message uses. */
export function unknownFields(): Uint8Array {
  return Writer.create()
    .uint32((90 << 3) | 0)
    .uint64('18446744073709551615')
    .uint32((91 << 3) | 1)
    .fixed64(42)
    .uint32((92 << 3) | 2)
    .bytes(Uint8Array.of(1, 2, 3))
    .uint32((93 << 3) | 5)
    .fixed32(7)
    .finish();
}

/** Span fields for protobufjs: a valid one-second root span with fresh ids. */
export function validSpanFields(): {
  traceId: Uint8Array;
  spanId: Uint8Array;
  name: string;
  startTimeUnixNano: string;
  endTimeUnixNano: string;
} {
  return {
    traceId: hexBytes(nextId(16)),
    spanId: hexBytes(nextId(8)),
    name: 'span',
    startTimeUnixNano: '1700000000000000000',
    endTimeUnixNano: '1700000001000000000',
  };
}
