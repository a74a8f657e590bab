import { I32, I64, LEN, MessageSchema, VARINT } from './wire.reader';

/*
 * Field numbers and wire types of the messages the trace decoder reads, from open-telemetry/
 * opentelemetry-proto @ ac2c4b5: collector/trace/v1/trace_service.proto, trace/v1/trace.proto,
 * common/v1/common.proto, resource/v1/resource.proto. The decoders switch on the tag literals
 * (field << 3 | wire type, commented at each case); these tables name fields in error messages and
 * list the fields read on purpose as skipped (entity_refs, the profiles-only *_strindex).
 */

export const EXPORT_REQUEST: MessageSchema = { name: 'ExportTraceServiceRequest', fields: { 1: ['resource_spans', LEN] } };

export const RESOURCE_SPANS: MessageSchema = {
  name: 'ResourceSpans',
  // 1000 = instrumentation_library_spans, deprecated and deleted in v0.19 (#407); same layout as ScopeSpans.
  fields: { 1: ['resource', LEN], 2: ['scope_spans', LEN], 3: ['schema_url', LEN], 1000: ['instrumentation_library_spans', LEN] },
};

export const RESOURCE: MessageSchema = {
  name: 'Resource',
  fields: { 1: ['attributes', LEN], 2: ['dropped_attributes_count', VARINT], 3: ['entity_refs', LEN] },
};

export const SCOPE_SPANS: MessageSchema = { name: 'ScopeSpans', fields: { 1: ['scope', LEN], 2: ['spans', LEN], 3: ['schema_url', LEN] } };

export const SCOPE: MessageSchema = {
  name: 'InstrumentationScope',
  fields: { 1: ['name', LEN], 2: ['version', LEN], 3: ['attributes', LEN], 4: ['dropped_attributes_count', VARINT] },
};

export const SPAN: MessageSchema = {
  name: 'Span',
  fields: {
    1: ['trace_id', LEN],
    2: ['span_id', LEN],
    3: ['trace_state', LEN],
    4: ['parent_span_id', LEN],
    5: ['name', LEN],
    6: ['kind', VARINT],
    7: ['start_time_unix_nano', I64],
    8: ['end_time_unix_nano', I64],
    9: ['attributes', LEN],
    10: ['dropped_attributes_count', VARINT],
    11: ['events', LEN],
    12: ['dropped_events_count', VARINT],
    13: ['links', LEN],
    14: ['dropped_links_count', VARINT],
    15: ['status', LEN],
    16: ['flags', I32],
  },
};

export const EVENT: MessageSchema = {
  name: 'Span.Event',
  fields: { 1: ['time_unix_nano', I64], 2: ['name', LEN], 3: ['attributes', LEN], 4: ['dropped_attributes_count', VARINT] },
};

export const LINK: MessageSchema = {
  name: 'Span.Link',
  fields: {
    1: ['trace_id', LEN],
    2: ['span_id', LEN],
    3: ['trace_state', LEN],
    4: ['attributes', LEN],
    5: ['dropped_attributes_count', VARINT],
    6: ['flags', I32],
  },
};

/** Field 1 is reserved (the old deprecated_code). */
export const STATUS: MessageSchema = { name: 'Status', fields: { 2: ['message', LEN], 3: ['code', VARINT] } };

export const KEY_VALUE: MessageSchema = { name: 'KeyValue', fields: { 1: ['key', LEN], 2: ['value', LEN], 3: ['key_strindex', VARINT] } };

export const ANY_VALUE: MessageSchema = {
  name: 'AnyValue',
  fields: {
    1: ['string_value', LEN],
    2: ['bool_value', VARINT],
    3: ['int_value', VARINT],
    4: ['double_value', I64],
    5: ['array_value', LEN],
    6: ['kvlist_value', LEN],
    7: ['bytes_value', LEN],
    8: ['string_value_strindex', VARINT],
  },
};

export const ARRAY_VALUE: MessageSchema = { name: 'ArrayValue', fields: { 1: ['values', LEN] } };

export const KEY_VALUE_LIST: MessageSchema = { name: 'KeyValueList', fields: { 1: ['values', LEN] } };
