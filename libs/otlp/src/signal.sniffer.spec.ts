import { HrTime, ValueType } from '@opentelemetry/api';
import { ProtobufLogsSerializer, ProtobufMetricsSerializer } from '@opentelemetry/otlp-transformer';
import { OtlpDecodeError } from './otlp.model';
import { decodeProtobufExport } from './protobuf.decoder';
import { sniffOtherSignal } from './signal.sniffer';
import { DEFAULT_RESOURCE, DEFAULT_SCOPE, nextId, readableSpan, toProtobuf } from './testing/otel-span.fixture';
import { encodeMessage, hexBytes, requestOfSpans } from './testing/otlp-proto.fixture';

type LogRecordInput = Parameters<typeof ProtobufLogsSerializer.serializeRequest>[0][number];
type ResourceMetricsInput = Parameters<typeof ProtobufMetricsSerializer.serializeRequest>[0];
type MetricInput = ResourceMetricsInput['scopeMetrics'][number]['metrics'][number];

/** sdk-metrics DataPointType and AggregationTemporality (not a dependency of ours, so by value). */
const HISTOGRAM = 0;
const EXPONENTIAL_HISTOGRAM = 1;
const GAUGE = 2;
const SUM = 3;
const CUMULATIVE = 1;

function logRecord(overrides: Partial<LogRecordInput> = {}): LogRecordInput {
  return {
    hrTime: [1_700_000_000, 0],
    hrTimeObserved: [1_700_000_000, 5],
    severityNumber: 9,
    severityText: 'INFO',
    body: 'user signed in',
    attributes: { 'user.id': 'u-1' },
    droppedAttributesCount: 0,
    resource: DEFAULT_RESOURCE,
    instrumentationScope: DEFAULT_SCOPE,
    spanContext: { traceId: nextId(16), spanId: nextId(8), traceFlags: 1 },
    ...overrides,
  } as LogRecordInput;
}

function metricsExport(metric: Partial<MetricInput>): Uint8Array {
  const request = {
    resource: DEFAULT_RESOURCE,
    scopeMetrics: [
      {
        scope: DEFAULT_SCOPE,
        metrics: [
          {
            descriptor: {
              name: 'http.server.request.duration',
              description: 'Duration of requests',
              unit: 's',
              valueType: ValueType.DOUBLE,
            },
            aggregationTemporality: CUMULATIVE,
            ...metric,
          },
        ],
      },
    ],
  } as ResourceMetricsInput;
  const bytes = ProtobufMetricsSerializer.serializeRequest(request);
  if (!bytes) throw new Error('the OTel metrics serializer returned nothing');
  return bytes;
}

const point = { startTime: [1_700_000_000, 0] as HrTime, endTime: [1_700_000_060, 0] as HrTime, attributes: { route: '/cart' } };
const METRICS: [string, Partial<MetricInput>][] = [
  ['gauge', { dataPointType: GAUGE, dataPoints: [{ ...point, value: 0.25 }] } as Partial<MetricInput>],
  ['sum', { dataPointType: SUM, isMonotonic: true, dataPoints: [{ ...point, value: 12 }] } as Partial<MetricInput>],
  [
    'histogram',
    {
      dataPointType: HISTOGRAM,
      dataPoints: [{ ...point, value: { count: 3, sum: 1.5, buckets: { boundaries: [0.1, 1], counts: [1, 1, 1] } } }],
    } as Partial<MetricInput>,
  ],
  [
    'exponential histogram',
    {
      dataPointType: EXPONENTIAL_HISTOGRAM,
      dataPoints: [
        {
          ...point,
          value: {
            count: 2,
            sum: 3,
            scale: 1,
            zeroCount: 0,
            positive: { offset: 0, bucketCounts: [1, 1] },
            negative: { offset: 0, bucketCounts: [] },
          },
        },
      ],
    } as Partial<MetricInput>,
  ],
];

const LOGS_ADVICE =
  'this looks like an OTLP logs export (ExportLogsServiceRequest: resourceLogs/logRecords) sent to the traces endpoint: send logs to /v1/logs (OTEL_EXPORTER_OTLP_LOGS_ENDPOINT, or OTEL_EXPORTER_OTLP_ENDPOINT for all signals)';
const METRICS_ADVICE =
  'this looks like an OTLP metrics export (ExportMetricsServiceRequest: resourceMetrics/metrics) sent to the traces endpoint: send metrics to /v1/metrics (OTEL_EXPORTER_OTLP_METRICS_ENDPOINT, or OTEL_EXPORTER_OTLP_ENDPOINT for all signals)';

describe('a logs or metrics export sent to /v1/traces', () => {
  it.each([
    ['with trace context', logRecord()],
    ['without trace context', logRecord({ spanContext: undefined, severityNumber: undefined, severityText: undefined })],
    ['with a structured body', logRecord({ body: { message: 'hi', fields: [1, 2] } })],
  ])('refuses a logs export %s, saying only traces are taken', (_case, record) => {
    const body = ProtobufLogsSerializer.serializeRequest([record]);
    if (!body) throw new Error('the OTel logs serializer returned nothing');

    expect(() => decodeProtobufExport(body)).toThrow(OtlpDecodeError);
    expect(() => decodeProtobufExport(body)).toThrow(LOGS_ADVICE);
  });

  it.each(METRICS)('refuses a metrics export (%s), pointing at /v1/metrics', (_case, metric) => {
    const body = metricsExport(metric);

    expect(() => decodeProtobufExport(body)).toThrow(METRICS_ADVICE);
  });

  it('does not mistake a trace export whose spans are all invalid for another signal', () => {
    const spans = [
      readableSpan({ startTime: [0, 0], endTime: [0, 0] }),
      readableSpan({ context: { traceId: '0'.repeat(32), spanId: nextId(8), traceFlags: 1 } }),
    ];
    const body = toProtobuf(spans);

    expect(sniffOtherSignal(body)).toBeUndefined();
    expect(decodeProtobufExport(body)).toMatchObject({ received: 2, rejected: 2, spans: [] });
  });

  it('keeps the trace decoder error for bytes that are no OTLP at all', () => {
    const garbage = Uint8Array.of(0x0a, 0x05, 0x12, 0x03, 0x12, 0x01);

    expect(sniffOtherSignal(garbage)).toBeUndefined();
    expect(() => decodeProtobufExport(garbage)).toThrow(/^protobuf body is (truncated|malformed)/);
  });

  it('does not call a span without timestamps but with ids a metric', () => {
    const span = encodeMessage('otlp.Span', {
      traceId: hexBytes(nextId(16)),
      spanId: hexBytes(nextId(8)),
      name: 'no times',
      attributes: [{ key: 'k', value: { stringValue: 'v' } }],
    });
    const body = requestOfSpans(span);

    expect(decodeProtobufExport(body)).toMatchObject({ received: 1, rejected: 1, rejectReasons: { missing_timestamps: 1 } });
  });
});
