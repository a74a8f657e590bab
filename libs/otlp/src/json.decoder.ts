import { idOfJson } from './binary-text.codec';
import { DecodeContext } from './decode.context';
import {
  arrayField,
  describeJson,
  field,
  isJsonObject,
  objectField,
  readJsonAttributes,
  resourceOfJson,
  scopeOfJson,
  stringOfJson,
  timeOfJson,
  uint32OfJson,
} from './json-value.decoder';
import {
  Attributes,
  DEFAULT_DECODE_LIMITS,
  DecodeLimits,
  DecodeResult,
  DecodedSpan,
  OtlpDecodeError,
  OtlpResource,
  OtlpScope,
  SpanEvent,
  SpanLink,
  StatusCode,
} from './otlp.model';
import { otherSignalError } from './signal.sniffer';
import { wellFormed } from './store-domain';
import { spanKindOfJson, statusCodeOfJson } from './span-enum.codec';
import { admitSpan, emptyDecodeResult, isValidLink, markTruncated } from './span.validation';

/**
 * Decodes an OTLP/JSON ExportTraceServiceRequest (proto3 JSON, hex ids) into the same DecodedSpans
 * as decodeProtobufExport. `body` is the raw text (or its UTF-8 bytes), or an already parsed value;
 * pass the text when you have it: int64 numbers beyond 2^53 are only exact when read from it.
 */
export function decodeJsonExport(body: unknown, limits: DecodeLimits = DEFAULT_DECODE_LIMITS): DecodeResult {
  const request = typeof body === 'string' ? parseJson(body) : body instanceof Uint8Array ? parseJson(utf8.decode(body)) : body;
  if (!isJsonObject(request))
    throw new OtlpDecodeError(`an OTLP/JSON trace export must be an object like {"resourceSpans": […]}, got ${describeJson(request)}`);
  if (field(request, 'resourceLogs', 'resource_logs') !== undefined) throw otherSignalError('logs');
  if (field(request, 'resourceMetrics', 'resource_metrics') !== undefined) throw otherSignalError('metrics');
  const context = new DecodeContext(limits);
  const result = emptyDecodeResult();
  arrayField(request, 'resourceSpans', 'resource_spans', 'body').forEach((resourceSpans, index) => {
    readResourceSpans(resourceSpans, `resourceSpans[${index}]`, context, result);
  });
  return result;
}

const utf8 = new TextDecoder('utf-8');

/** An OTLP/JSON body (text or UTF-8 bytes) parsed as decodeJsonExport parses it; OtlpDecodeError when it is not JSON. */
export function parseJsonBody(body: string | Uint8Array): unknown {
  return parseJson(typeof body === 'string' ? body : utf8.decode(body));
}

/** An integer literal of 16+ digits outside a string, i.e. one JSON.parse would round (> 2^53). */
const LONG_INTEGER_LITERAL = /[:[,]\s*-?\d{16}/;

function parseJson(text: string): unknown {
  // A UTF-8 byte order mark is not JSON but some Windows tools write one; TextDecoder already drops it from bytes.
  if (text.charCodeAt(0) === 0xfeff) text = text.slice(1);
  // An empty body is an empty request, as it is in protobuf (the OTLP spec: an empty request succeeds).
  if (text.trim() === '') return {};
  let parsed: unknown;
  try {
    // The reviver costs ~2x, so only bodies that need it pay: exporters send int64 as strings.
    parsed = LONG_INTEGER_LITERAL.test(text) ? JSON.parse(text, keepLongIntegers) : JSON.parse(text);
  } catch (error) {
    throw new OtlpDecodeError(`the body is not valid JSON: ${(error as Error).message}`);
  }
  // Lone surrogates become U+FFFD, as the protobuf decoder gives for the same broken text in UTF-8.
  // Only a \uD800–\uDFFF escape can make one (the text itself came from UTF-8 bytes).
  return SURROGATE_ESCAPE.test(text) ? wellFormed(parsed) : parsed;
}

const SURROGATE_ESCAPE = /\\u[dD][89a-fA-F]/;

/** Keeps the exact digits of integers past 2^53 as strings (reviver source text, ES2025); int64 readers take strings. */
function keepLongIntegers(_key: string, value: unknown, context?: { source?: string }): unknown {
  if (typeof value !== 'number' || Number.isSafeInteger(value) || context?.source === undefined) return value;
  return /^-?\d+$/.test(context.source) ? context.source : value;
}

function readResourceSpans(raw: unknown, path: string, context: DecodeContext, result: DecodeResult): void {
  if (!isJsonObject(raw)) throw new OtlpDecodeError(`${path} must be an object, got ${describeJson(raw)}`);
  const firstSpan = result.spans.length;
  context.truncated = false;
  const resource = resourceOfJson(raw, path, context);
  const resourceCut = context.truncated;
  // instrumentationLibrarySpans: the pre-v0.19 name of scopeSpans, still sent by old exporters.
  for (const [camel, snake] of [
    ['scopeSpans', 'scope_spans'],
    ['instrumentationLibrarySpans', 'instrumentation_library_spans'],
  ]) {
    arrayField(raw, camel, snake, path).forEach((scopeSpans, index) =>
      readScopeSpans(scopeSpans, `${path}.${camel}[${index}]`, resource, context, result),
    );
  }
  if (resourceCut) markTruncated(result.spans, firstSpan);
}

function readScopeSpans(raw: unknown, path: string, resource: OtlpResource, context: DecodeContext, result: DecodeResult): void {
  if (!isJsonObject(raw)) throw new OtlpDecodeError(`${path} must be an object, got ${describeJson(raw)}`);
  const firstSpan = result.spans.length;
  context.truncated = false;
  const scope = scopeOfJson(raw, path, context);
  const scopeCut = context.truncated;
  arrayField(raw, 'spans', 'spans', path).forEach((span, index) =>
    admitSpan(result, readSpan(span, `${path}.spans[${index}]`, resource, scope, context)),
  );
  if (scopeCut) markTruncated(result.spans, firstSpan);
}

function readSpan(raw: unknown, path: string, resource: OtlpResource, scope: OtlpScope, context: DecodeContext): DecodedSpan {
  if (!isJsonObject(raw)) throw new OtlpDecodeError(`${path} must be an object, got ${describeJson(raw)}`);
  context.truncated = false;
  const status = objectField(raw, 'status', 'status', path);
  const span: DecodedSpan = {
    traceId: idOfJson(field(raw, 'traceId', 'trace_id'), 16),
    spanId: idOfJson(field(raw, 'spanId', 'span_id'), 8),
    parentSpanId: idOfJson(field(raw, 'parentSpanId', 'parent_span_id'), 8),
    traceState: stringOfJson(field(raw, 'traceState', 'trace_state')),
    flags: uint32OfJson(field(raw, 'flags')),
    name: context.name(stringOfJson(field(raw, 'name'))),
    kind: spanKindOfJson(field(raw, 'kind')),
    startTimeUnixNano: timeOfJson(field(raw, 'startTimeUnixNano', 'start_time_unix_nano')),
    endTimeUnixNano: timeOfJson(field(raw, 'endTimeUnixNano', 'end_time_unix_nano')),
    attributes: {},
    droppedAttributesCount: uint32OfJson(field(raw, 'droppedAttributesCount', 'dropped_attributes_count')),
    events: [],
    droppedEventsCount: uint32OfJson(field(raw, 'droppedEventsCount', 'dropped_events_count')),
    links: [],
    droppedLinksCount: uint32OfJson(field(raw, 'droppedLinksCount', 'dropped_links_count')),
    statusCode: status ? statusCodeOfJson(field(status, 'code')) : StatusCode.UNSET,
    statusMessage: status ? context.value(stringOfJson(field(status, 'message'))) : '',
    resource,
    scope,
    truncated: false,
  };
  span.droppedAttributesCount += readJsonAttributes(field(raw, 'attributes'), `${path}.attributes`, span.attributes, context);
  arrayField(raw, 'events', 'events', path).forEach((event, index) => {
    if (context.eventFits(span.events.length)) span.events.push(readEvent(event, `${path}.events[${index}]`, context));
    else span.droppedEventsCount++;
  });
  arrayField(raw, 'links', 'links', path).forEach((rawLink, index) => {
    const link = context.linkFits(span.links.length) ? readLink(rawLink, `${path}.links[${index}]`, context) : undefined;
    if (link && isValidLink(link)) span.links.push(link);
    else span.droppedLinksCount++;
  });
  span.truncated = context.truncated;
  return span;
}

function readEvent(raw: unknown, path: string, context: DecodeContext): SpanEvent {
  if (!isJsonObject(raw)) throw new OtlpDecodeError(`${path} must be an object, got ${describeJson(raw)}`);
  const attributes: Attributes = {};
  const cut = readJsonAttributes(field(raw, 'attributes'), `${path}.attributes`, attributes, context);
  return {
    timeUnixNano: timeOfJson(field(raw, 'timeUnixNano', 'time_unix_nano')),
    name: context.name(stringOfJson(field(raw, 'name'))),
    attributes,
    droppedAttributesCount: uint32OfJson(field(raw, 'droppedAttributesCount', 'dropped_attributes_count')) + cut,
  };
}

function readLink(raw: unknown, path: string, context: DecodeContext): SpanLink {
  if (!isJsonObject(raw)) throw new OtlpDecodeError(`${path} must be an object, got ${describeJson(raw)}`);
  const attributes: Attributes = {};
  const cut = readJsonAttributes(field(raw, 'attributes'), `${path}.attributes`, attributes, context);
  return {
    traceId: idOfJson(field(raw, 'traceId', 'trace_id'), 16),
    spanId: idOfJson(field(raw, 'spanId', 'span_id'), 8),
    traceState: stringOfJson(field(raw, 'traceState', 'trace_state')),
    attributes,
    droppedAttributesCount: uint32OfJson(field(raw, 'droppedAttributesCount', 'dropped_attributes_count')) + cut,
    flags: uint32OfJson(field(raw, 'flags')),
  };
}
