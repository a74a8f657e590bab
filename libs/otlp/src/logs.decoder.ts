import { ZERO_SPAN_ID, ZERO_TRACE_ID, idOfJson } from './binary-text.codec';
import { DecodeContext } from './decode.context';
import {
  anyValueOfJson,
  arrayField,
  describeJson,
  field,
  isJsonObject,
  readJsonAttributes,
  resourceOfJson,
  scopeOfJson,
  stringOfJson,
  timeOfJson,
  uint32OfJson,
} from './json-value.decoder';
import { parseJsonBody } from './json.decoder';
import { AttributeValue, Attributes, DEFAULT_DECODE_LIMITS, DecodeLimits, OtlpDecodeError, OtlpResource, OtlpScope } from './otlp.model';
import { readAnyValue, readAttribute, readId, readResource, readScope } from './protobuf-value.decoder';
import { I32, I64, LEN, MessageSchema, VARINT, WireReader } from './wire.reader';

/*
 * OTLP logs (collector/logs/v1/logs_service.proto, logs/v1/logs.proto at opentelemetry-proto
 * v1.5+, where LogRecord.event_name = 12 exists). We store one kind of log record: a GenAI event
 * (an event named gen_ai.*) emitted inside a span, which carries that span's message contents;
 * the OpenAI instrumentations put prompts and completions there instead of on the span. Every
 * other record is counted and dropped, and the answer's partial success says so.
 */

/** One log record as read; the resource and scope are shared by reference as for spans. */
export interface DecodedLogRecord {
  /** 32 lowercase hex characters, or '' when the record has no (valid) trace id. */
  traceId: string;
  /** 16 lowercase hex characters, or '' when none. */
  spanId: string;
  /** time_unix_nano, else observed_time_unix_nano; 0n when neither was sent. */
  timeUnixNano: bigint;
  /** LogRecord.event_name, else the older `event.name` attribute; '' for a plain log line. */
  eventName: string;
  severityNumber: number;
  severityText: string;
  /** The body as an attribute value (a kvlist becomes an object); null when unset. */
  body: AttributeValue;
  attributes: Attributes;
  droppedAttributesCount: number;
  resource: OtlpResource;
  scope: OtlpScope;
}

/** Why a log record was not kept. */
export type LogDropReason =
  /** Not an event named gen_ai.*: application logs belong in a log store. */
  | 'not_a_genai_event'
  /** A gen_ai.* event with no valid trace and span id: there is no span to give it to. */
  | 'no_span_context';

export interface LogsDecodeResult {
  /** The GenAI events tied to a span: what is kept. */
  events: DecodedLogRecord[];
  /** Log records seen in the request, kept or not. */
  received: number;
  dropped: number;
  dropReasons: Partial<Record<LogDropReason, number>>;
}

const LOGS_REQUEST: MessageSchema = { name: 'ExportLogsServiceRequest', fields: { 1: ['resource_logs', LEN] } };
const RESOURCE_LOGS: MessageSchema = {
  name: 'ResourceLogs',
  fields: { 1: ['resource', LEN], 2: ['scope_logs', LEN], 3: ['schema_url', LEN] },
};
const SCOPE_LOGS: MessageSchema = { name: 'ScopeLogs', fields: { 1: ['scope', LEN], 2: ['log_records', LEN], 3: ['schema_url', LEN] } };
const LOG_RECORD: MessageSchema = {
  name: 'LogRecord',
  fields: {
    1: ['time_unix_nano', I64],
    2: ['severity_number', VARINT],
    3: ['severity_text', LEN],
    5: ['body', LEN],
    6: ['attributes', LEN],
    7: ['dropped_attributes_count', VARINT],
    8: ['flags', I32],
    9: ['trace_id', LEN],
    10: ['span_id', LEN],
    11: ['observed_time_unix_nano', I64],
    12: ['event_name', LEN],
  },
};

/** The attribute older SDKs (and the Events API before LogRecord.event_name) name the event with. */
export const EVENT_NAME_ATTRIBUTE = 'event.name';

/** Decodes a binary ExportLogsServiceRequest. Throws OtlpDecodeError when the body is unusable. */
export function decodeProtobufLogs(bytes: Uint8Array, limits: DecodeLimits = DEFAULT_DECODE_LIMITS): LogsDecodeResult {
  const reader = new WireReader(bytes);
  const context = new DecodeContext(limits);
  const result = emptyLogsResult();
  const end = reader.length;
  while (reader.pos < end) {
    const tag = reader.uint32('ExportLogsServiceRequest');
    if (tag === 0x0a) readResourceLogs(reader, reader.lengthEnd('ExportLogsServiceRequest.resource_logs', end), context, result);
    else reader.skipField(tag, LOGS_REQUEST, end);
  }
  reader.expectEnd(end, 'ExportLogsServiceRequest');
  return result;
}

function readResourceLogs(reader: WireReader, end: number, context: DecodeContext, result: LogsDecodeResult): void {
  const resource: OtlpResource = { attributes: {}, droppedAttributesCount: 0, schemaUrl: '' };
  while (reader.pos < end) {
    const tag = reader.uint32('ResourceLogs');
    if (tag === 0x0a) readResource(reader, reader.lengthEnd('ResourceLogs.resource', end), resource, context);
    else if (tag === 0x12) readScopeLogs(reader, reader.lengthEnd('ResourceLogs.scope_logs', end), resource, context, result);
    else if (tag === 0x1a) resource.schemaUrl = reader.string('ResourceLogs.schema_url', end);
    else reader.skipField(tag, RESOURCE_LOGS, end);
  }
  reader.expectEnd(end, 'ResourceLogs');
}

function readScopeLogs(reader: WireReader, end: number, resource: OtlpResource, context: DecodeContext, result: LogsDecodeResult): void {
  const scope: OtlpScope = { name: '', version: '', attributes: {}, droppedAttributesCount: 0, schemaUrl: '' };
  while (reader.pos < end) {
    const tag = reader.uint32('ScopeLogs');
    if (tag === 0x0a) readScope(reader, reader.lengthEnd('ScopeLogs.scope', end), scope, context);
    else if (tag === 0x12)
      admitRecord(result, readLogRecord(reader, reader.lengthEnd('ScopeLogs.log_records', end), resource, scope, context));
    else if (tag === 0x1a) scope.schemaUrl = reader.string('ScopeLogs.schema_url', end);
    else reader.skipField(tag, SCOPE_LOGS, end);
  }
  reader.expectEnd(end, 'ScopeLogs');
}

function readLogRecord(
  reader: WireReader,
  end: number,
  resource: OtlpResource,
  scope: OtlpScope,
  context: DecodeContext,
): DecodedLogRecord {
  const record = emptyRecord(resource, scope);
  let time = 0n;
  let observed = 0n;
  let kept = 0;
  let cut = 0;
  while (reader.pos < end) {
    const tag = reader.uint32('LogRecord');
    switch (tag) {
      case 0x09: // time_unix_nano = 1, I64
        time = reader.fixed64('LogRecord.time_unix_nano');
        break;
      case 0x10: // severity_number = 2, VARINT
        record.severityNumber = reader.uint32('LogRecord.severity_number');
        break;
      case 0x1a: // severity_text = 3, LEN
        record.severityText = context.name(reader.string('LogRecord.severity_text', end));
        break;
      case 0x2a: // body = 5, LEN
        record.body = readAnyValue(reader, reader.lengthEnd('LogRecord.body', end), context, 1);
        break;
      case 0x32: // attributes = 6, LEN
        if (readAttribute(reader, 'LogRecord.attributes', end, record.attributes, kept, context)) kept++;
        else cut++;
        break;
      case 0x38: // dropped_attributes_count = 7, VARINT
        record.droppedAttributesCount = reader.uint32('LogRecord.dropped_attributes_count');
        break;
      case 0x4a: // trace_id = 9, LEN
        record.traceId = readId(reader, 'LogRecord.trace_id', end);
        break;
      case 0x52: // span_id = 10, LEN
        record.spanId = readId(reader, 'LogRecord.span_id', end);
        break;
      case 0x59: // observed_time_unix_nano = 11, I64
        observed = reader.fixed64('LogRecord.observed_time_unix_nano');
        break;
      case 0x62: // event_name = 12, LEN
        record.eventName = context.name(reader.string('LogRecord.event_name', end));
        break;
      default:
        reader.skipField(tag, LOG_RECORD, end); // flags = 8 (trace flags) is not needed
    }
  }
  reader.expectEnd(end, 'LogRecord');
  record.droppedAttributesCount += cut;
  record.timeUnixNano = time !== 0n ? time : observed;
  return record;
}

/** Decodes an OTLP/JSON ExportLogsServiceRequest (hex ids), as decodeProtobufLogs does the binary one. */
export function decodeJsonLogs(body: unknown, limits: DecodeLimits = DEFAULT_DECODE_LIMITS): LogsDecodeResult {
  const request = typeof body === 'string' || body instanceof Uint8Array ? parseJsonBody(body) : body;
  if (!isJsonObject(request))
    throw new OtlpDecodeError(`an OTLP/JSON logs export must be an object like {"resourceLogs": […]}, got ${describeJson(request)}`);
  const context = new DecodeContext(limits);
  const result = emptyLogsResult();
  arrayField(request, 'resourceLogs', 'resource_logs', 'body').forEach((raw, index) => {
    const path = `resourceLogs[${index}]`;
    if (!isJsonObject(raw)) throw new OtlpDecodeError(`${path} must be an object, got ${describeJson(raw)}`);
    const resource = resourceOfJson(raw, path, context);
    arrayField(raw, 'scopeLogs', 'scope_logs', path).forEach((rawScopeLogs, scopeIndex) => {
      const scopePath = `${path}.scopeLogs[${scopeIndex}]`;
      if (!isJsonObject(rawScopeLogs)) throw new OtlpDecodeError(`${scopePath} must be an object, got ${describeJson(rawScopeLogs)}`);
      const scope = scopeOfJson(rawScopeLogs, scopePath, context);
      arrayField(rawScopeLogs, 'logRecords', 'log_records', scopePath).forEach((rawRecord, recordIndex) =>
        admitRecord(result, readJsonRecord(rawRecord, `${scopePath}.logRecords[${recordIndex}]`, resource, scope, context)),
      );
    });
  });
  return result;
}

function readJsonRecord(raw: unknown, path: string, resource: OtlpResource, scope: OtlpScope, context: DecodeContext): DecodedLogRecord {
  if (!isJsonObject(raw)) throw new OtlpDecodeError(`${path} must be an object, got ${describeJson(raw)}`);
  const record = emptyRecord(resource, scope);
  record.traceId = idOfJson(field(raw, 'traceId', 'trace_id'), 16);
  record.spanId = idOfJson(field(raw, 'spanId', 'span_id'), 8);
  const time = timeOfJson(field(raw, 'timeUnixNano', 'time_unix_nano'));
  record.timeUnixNano = time !== 0n ? time : timeOfJson(field(raw, 'observedTimeUnixNano', 'observed_time_unix_nano'));
  record.eventName = context.name(stringOfJson(field(raw, 'eventName', 'event_name')));
  record.severityNumber = severityOfJson(field(raw, 'severityNumber', 'severity_number'));
  record.severityText = context.name(stringOfJson(field(raw, 'severityText', 'severity_text')));
  record.body = anyValueOfJson(field(raw, 'body'), context, 1);
  const dropped = readJsonAttributes(field(raw, 'attributes'), `${path}.attributes`, record.attributes, context);
  record.droppedAttributesCount = uint32OfJson(field(raw, 'droppedAttributesCount', 'dropped_attributes_count')) + dropped;
  return record;
}

/** proto3 JSON enums come as numbers or as their names (SEVERITY_NUMBER_INFO). */
function severityOfJson(value: unknown): number {
  if (typeof value === 'string' && value.startsWith('SEVERITY_NUMBER_')) return SEVERITY_NAMES.indexOf(value.slice(16));
  return uint32OfJson(value);
}

const SEVERITY_NAMES = ['UNSPECIFIED', 'TRACE', 'TRACE2', 'TRACE3', 'TRACE4', 'DEBUG', 'DEBUG2', 'DEBUG3', 'DEBUG4'].concat(
  ['INFO', 'WARN', 'ERROR', 'FATAL'].flatMap((level) => [level, `${level}2`, `${level}3`, `${level}4`]),
);

function emptyRecord(resource: OtlpResource, scope: OtlpScope): DecodedLogRecord {
  return {
    traceId: '',
    spanId: '',
    timeUnixNano: 0n,
    eventName: '',
    severityNumber: 0,
    severityText: '',
    body: null,
    attributes: {},
    droppedAttributesCount: 0,
    resource,
    scope,
  };
}

function emptyLogsResult(): LogsDecodeResult {
  return { events: [], received: 0, dropped: 0, dropReasons: {} };
}

/** Counts the record, then keeps it when it is a GenAI event of a span, or counts why not. */
function admitRecord(result: LogsDecodeResult, record: DecodedLogRecord): void {
  result.received++;
  if (record.eventName === '') {
    const named = record.attributes[EVENT_NAME_ATTRIBUTE];
    if (typeof named === 'string') record.eventName = named;
  }
  const reason = dropReasonOf(record);
  if (reason === undefined) {
    result.events.push(record);
    return;
  }
  result.dropped++;
  result.dropReasons[reason] = (result.dropReasons[reason] ?? 0) + 1;
}

function dropReasonOf(record: DecodedLogRecord): LogDropReason | undefined {
  if (!record.eventName.startsWith('gen_ai.')) return 'not_a_genai_event';
  const traced = record.traceId.length === 32 && record.traceId !== ZERO_TRACE_ID;
  if (!traced || record.spanId.length !== 16 || record.spanId === ZERO_SPAN_ID) return 'no_span_context';
  return undefined;
}

const DROP_EXPLANATIONS: Record<LogDropReason, string> = {
  not_a_genai_event:
    'not GenAI events (only log records whose event name starts with "gen_ai." are kept; send application logs to a log store)',
  no_span_context: 'GenAI events without a valid trace and span id (an event is kept as part of the span it was emitted in)',
};

/** The partial-success message for the records not kept: how many, and why. */
export function describeDroppedLogs(result: LogsDecodeResult): string {
  const parts = Object.entries(result.dropReasons).map(
    ([reason, count]) => `${count} ${count === 1 ? 'record' : 'records'} ${DROP_EXPLANATIONS[reason as LogDropReason]}`,
  );
  return `${result.dropped} of ${result.received} log records were counted and not stored: ${parts.join('; ')}`;
}
