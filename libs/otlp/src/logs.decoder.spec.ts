import { JsonLogsSerializer, ProtobufLogsSerializer } from '@opentelemetry/otlp-transformer';
import logsExample from './fixtures/otlp-example-logs.json';
import { decodeJsonLogs, decodeProtobufLogs, describeDroppedLogs, type DecodedLogRecord } from './logs.decoder';
import { OtlpDecodeError } from './otlp.model';
import { DEFAULT_RESOURCE, DEFAULT_SCOPE, nextId } from './testing/otel-span.fixture';

type LogRecordInput = Parameters<typeof ProtobufLogsSerializer.serializeRequest>[0][number];

const traceId = nextId(16);
const spanId = nextId(8);

/** A log record as the OTel JS SDK hands it to its exporters. */
function logRecord(overrides: Partial<LogRecordInput> = {}): LogRecordInput {
  return {
    hrTime: [1_764_504_000, 123_456_789],
    hrTimeObserved: [1_764_504_001, 0],
    severityNumber: 9,
    severityText: 'INFO',
    body: 'user signed in',
    attributes: {},
    droppedAttributesCount: 0,
    resource: DEFAULT_RESOURCE,
    instrumentationScope: DEFAULT_SCOPE,
    spanContext: { traceId, spanId, traceFlags: 1 },
    ...overrides,
  } as LogRecordInput;
}

const userMessage = logRecord({
  eventName: 'gen_ai.user.message',
  body: { content: 'What is the weather in Paris?' },
  attributes: { 'gen_ai.system': 'openai' },
} as Partial<LogRecordInput>);
const choice = logRecord({
  eventName: 'gen_ai.choice',
  body: { index: 0, finish_reason: 'stop', message: { content: 'Sunny, 21°C.' } },
  attributes: { 'gen_ai.system': 'openai' },
} as Partial<LogRecordInput>);
const appLog = logRecord({ body: 'cache miss for user 42' });
const orphanEvent = logRecord({
  eventName: 'gen_ai.user.message',
  spanContext: undefined,
  body: { content: 'hi' },
} as Partial<LogRecordInput>);

function both(records: LogRecordInput[]) {
  const protobuf = ProtobufLogsSerializer.serializeRequest(records)!;
  const json = JsonLogsSerializer.serializeRequest(records)!;
  return { protobuf: decodeProtobufLogs(protobuf), json: decodeJsonLogs(json) };
}

function plain(record: DecodedLogRecord) {
  const { resource, scope, ...rest } = record;
  return { ...rest, service: resource.attributes['service.name'], scope: scope.name };
}

describe('decoding OTLP logs', () => {
  it('keeps the GenAI events of a span, with their name, body, attributes, ids and time, the same from protobuf and JSON', () => {
    const { protobuf, json } = both([userMessage, choice]);

    expect(protobuf.received).toBe(2);
    expect(protobuf.dropped).toBe(0);
    expect(protobuf.events.map(plain)).toStrictEqual([
      {
        traceId,
        spanId,
        timeUnixNano: 1_764_504_000_123_456_789n,
        eventName: 'gen_ai.user.message',
        severityNumber: 9,
        severityText: 'INFO',
        body: { content: 'What is the weather in Paris?' },
        attributes: { 'gen_ai.system': 'openai' },
        droppedAttributesCount: 0,
        service: 'checkout',
        scope: DEFAULT_SCOPE.name,
      },
      {
        traceId,
        spanId,
        timeUnixNano: 1_764_504_000_123_456_789n,
        eventName: 'gen_ai.choice',
        severityNumber: 9,
        severityText: 'INFO',
        body: { index: 0, finish_reason: 'stop', message: { content: 'Sunny, 21°C.' } },
        attributes: { 'gen_ai.system': 'openai' },
        droppedAttributesCount: 0,
        service: 'checkout',
        scope: DEFAULT_SCOPE.name,
      },
    ]);
    expect(json.events.map(plain)).toStrictEqual(protobuf.events.map(plain));
  });

  it('counts every other record as dropped, with why, and says so', () => {
    const { protobuf, json } = both([userMessage, appLog, appLog, orphanEvent]);

    for (const result of [protobuf, json]) {
      expect(result.received).toBe(4);
      expect(result.events.map((e) => e.eventName)).toStrictEqual(['gen_ai.user.message']);
      expect(result.dropped).toBe(3);
      expect(result.dropReasons).toStrictEqual({ not_a_genai_event: 2, no_span_context: 1 });
    }
    expect(describeDroppedLogs(protobuf)).toBe(
      '3 of 4 log records were counted and not stored: 2 records not GenAI events (only log records whose event name starts with "gen_ai." are kept; send application logs to a log store); 1 record GenAI events without a valid trace and span id (an event is kept as part of the span it was emitted in)',
    );
  });

  it('reads the event name from the event.name attribute of older SDKs, and the observed time when the time is unset', () => {
    const older = logRecord({
      hrTime: [0, 0],
      attributes: { 'event.name': 'gen_ai.system.message', 'gen_ai.system': 'openai' },
      body: { content: 'You are terse.' },
    });
    const { protobuf, json } = both([older]);

    for (const result of [protobuf, json]) {
      expect(result.events).toHaveLength(1);
      expect(result.events[0]!.eventName).toBe('gen_ai.system.message');
      expect(result.events[0]!.timeUnixNano).toBe(1_764_504_001_000_000_000n);
    }
  });

  it('drops the OTLP example log record, which is an application log line', () => {
    const result = decodeJsonLogs(JSON.stringify(logsExample));

    expect(result.received).toBe(logsExample.resourceLogs.flatMap((r) => r.scopeLogs.flatMap((s) => s.logRecords)).length);
    expect(result.events).toStrictEqual([]);
    expect(result.dropReasons).toStrictEqual({ not_a_genai_event: result.received });
  });

  it('refuses a body that is not a logs export', () => {
    expect(() => decodeJsonLogs('[1, 2]')).toThrow(OtlpDecodeError);
    expect(() => decodeJsonLogs('{"resourceLogs": [')).toThrow(/not valid JSON/);
    const bytes = ProtobufLogsSerializer.serializeRequest([userMessage])!;
    expect(() => decodeProtobufLogs(bytes.subarray(0, bytes.length - 3))).toThrow(OtlpDecodeError);
  });

  it('takes an empty body as an empty export', () => {
    expect(decodeProtobufLogs(new Uint8Array())).toStrictEqual({ events: [], received: 0, dropped: 0, dropReasons: {} });
    expect(decodeJsonLogs('')).toStrictEqual({ events: [], received: 0, dropped: 0, dropReasons: {} });
  });
});
