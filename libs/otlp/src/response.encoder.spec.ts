import {
  JsonLogsSerializer,
  JsonMetricsSerializer,
  JsonTraceSerializer,
  ProtobufLogsSerializer,
  ProtobufMetricsSerializer,
  ProtobufTraceSerializer,
} from '@opentelemetry/otlp-transformer';
import {
  MAX_RESPONSE_MESSAGE_LENGTH,
  RpcCode,
  describeRejections,
  encodeExportResponse,
  encodeRetryInfo,
  encodeStatus,
} from './response.encoder';
import { decodeMessage } from './testing/otlp-proto.fixture';

describe('encodeExportResponse', () => {
  it('leaves partial_success unset on full success: an empty body, {} in JSON', () => {
    const protobuf = encodeExportResponse('protobuf', 0, '');

    expect(protobuf).toHaveLength(0);
    expect(ProtobufTraceSerializer.deserializeResponse(protobuf)).toStrictEqual({});
    expect(encodeExportResponse('json', 0, '')).toBe('{}');
    expect(encodeExportResponse('json', 0)).toBe('{}');
  });

  it('writes a partial success the OpenTelemetry exporters read back', () => {
    const message = '3 spans rejected: 2 invalid_trace_id, 1 end_before_start';

    const protobuf = encodeExportResponse('protobuf', 3, message);
    const json = encodeExportResponse('json', 3, message);

    expect(ProtobufTraceSerializer.deserializeResponse(protobuf)).toStrictEqual({
      partialSuccess: { rejectedSpans: 3, errorMessage: message },
    });
    expect(decodeMessage('otlp.ExportTraceServiceResponse', protobuf)).toStrictEqual({
      partialSuccess: { rejectedSpans: '3', errorMessage: message },
    });
    // int64 is a string in proto3 JSON.
    expect(JSON.parse(json)).toStrictEqual({ partialSuccess: { rejectedSpans: '3', errorMessage: message } });
    expect(JsonTraceSerializer.deserializeResponse(new TextEncoder().encode(json))).toStrictEqual({
      partialSuccess: { rejectedSpans: '3', errorMessage: message },
    });
  });

  it('writes the logs and metrics partial successes under their own field names', () => {
    const encoder = new TextEncoder();
    const logs = 'log records were counted and not stored';
    const points = 'metric data points were counted and not stored';

    expect(ProtobufLogsSerializer.deserializeResponse(encodeExportResponse('protobuf', 4, logs, 'logs'))).toStrictEqual({
      partialSuccess: { rejectedLogRecords: 4, errorMessage: logs },
    });
    expect(JsonLogsSerializer.deserializeResponse(encoder.encode(encodeExportResponse('json', 4, logs, 'logs')))).toStrictEqual({
      partialSuccess: { rejectedLogRecords: '4', errorMessage: logs },
    });
    expect(ProtobufMetricsSerializer.deserializeResponse(encodeExportResponse('protobuf', 9, points, 'metrics'))).toStrictEqual({
      partialSuccess: { rejectedDataPoints: 9, errorMessage: points },
    });
    expect(JsonMetricsSerializer.deserializeResponse(encoder.encode(encodeExportResponse('json', 9, points, 'metrics')))).toStrictEqual({
      partialSuccess: { rejectedDataPoints: '9', errorMessage: points },
    });
  });

  it('writes a warning on full success as rejected 0 with a message', () => {
    const warning = 'attributes over 512 per span were dropped';

    expect(decodeMessage('otlp.ExportTraceServiceResponse', encodeExportResponse('protobuf', 0, warning))).toStrictEqual({
      partialSuccess: { errorMessage: warning },
    });
    expect(JSON.parse(encodeExportResponse('json', 0, warning))).toStrictEqual({
      partialSuccess: { rejectedSpans: '0', errorMessage: warning },
    });
  });

  it('writes rejected counts past 2^32 exactly', () => {
    const rejected = 2 ** 40 + 7;

    expect(decodeMessage('otlp.ExportTraceServiceResponse', encodeExportResponse('protobuf', rejected, 'x'))).toStrictEqual({
      partialSuccess: { rejectedSpans: String(rejected), errorMessage: 'x' },
    });
  });

  it('shortens an error message that would make the response too large', () => {
    const message = 'é'.repeat(MAX_RESPONSE_MESSAGE_LENGTH + 100);

    const decoded = decodeMessage('otlp.ExportTraceServiceResponse', encodeExportResponse('protobuf', 1, message)) as {
      partialSuccess: { errorMessage: string };
    };

    expect(decoded.partialSuccess.errorMessage).toHaveLength(MAX_RESPONSE_MESSAGE_LENGTH);
    expect(decoded.partialSuccess.errorMessage.endsWith('…')).toBe(true);
  });
});

describe('encodeStatus', () => {
  it('writes a google.rpc.Status with code and message', () => {
    const message = 'the body is not valid JSON: Unexpected end of JSON input';

    expect(decodeMessage('google.rpc.Status', encodeStatus('protobuf', RpcCode.INVALID_ARGUMENT, message))).toStrictEqual({
      code: RpcCode.INVALID_ARGUMENT,
      message,
    });
    expect(JSON.parse(encodeStatus('json', RpcCode.INVALID_ARGUMENT, message))).toStrictEqual({ code: 3, message });
  });

  it('attaches RetryInfo and BadRequest details as google.protobuf.Any', () => {
    const violation = { field: 'resourceSpans[0].scopeSpans', description: 'must be an array' };

    const status = decodeMessage(
      'google.rpc.Status',
      encodeStatus('protobuf', RpcCode.RESOURCE_EXHAUSTED, 'tenant quota exceeded', [
        { type: 'retry_info', retryDelayMs: 1500 },
        { type: 'bad_request', fieldViolations: [violation] },
      ]),
    ) as { code: number; details: { typeUrl: string; value: string }[] };

    expect(status.code).toBe(RpcCode.RESOURCE_EXHAUSTED);
    expect(status.details.map((detail) => detail.typeUrl)).toEqual([
      'type.googleapis.com/google.rpc.RetryInfo',
      'type.googleapis.com/google.rpc.BadRequest',
    ]);
    const [retryInfo, badRequest] = status.details.map((detail) => Buffer.from(detail.value, 'base64'));
    expect(decodeMessage('google.rpc.RetryInfo', retryInfo)).toStrictEqual({ retryDelay: { seconds: '1', nanos: 500_000_000 } });
    expect(decodeMessage('google.rpc.BadRequest', badRequest)).toStrictEqual({ fieldViolations: [violation] });
  });

  it('writes details in JSON with @type and a Duration string', () => {
    const json = encodeStatus('json', RpcCode.UNAVAILABLE, 'overloaded', [{ type: 'retry_info', retryDelayMs: 2_050 }]);

    expect(JSON.parse(json)).toStrictEqual({
      code: 14,
      message: 'overloaded',
      details: [{ '@type': 'type.googleapis.com/google.rpc.RetryInfo', retryDelay: '2.050s' }],
    });
  });
});

describe('encodeRetryInfo', () => {
  it.each([
    [30_000, { retryDelay: { seconds: '30' } }],
    [250, { retryDelay: { nanos: 250_000_000 } }],
    [0, { retryDelay: {} }],
  ])('writes %d ms as a google.protobuf.Duration', (delayMs, expected) => {
    expect(decodeMessage('google.rpc.RetryInfo', encodeRetryInfo(delayMs))).toStrictEqual(expected);
  });
});

describe('describeRejections', () => {
  it('lists reasons by count in English', () => {
    const rejectReasons = { end_before_start: 1, invalid_trace_id: 2 };
    const rejected = rejectReasons.end_before_start + rejectReasons.invalid_trace_id;

    expect(describeRejections({ rejected, rejectReasons })).toBe(`${rejected} spans rejected: 2 invalid_trace_id, 1 end_before_start`);
    expect(describeRejections({ rejected: 1, rejectReasons: { missing_timestamps: 1 } })).toBe('1 span rejected: 1 missing_timestamps');
    expect(describeRejections({ rejected: 0, rejectReasons: {} })).toBe('');
  });
});
