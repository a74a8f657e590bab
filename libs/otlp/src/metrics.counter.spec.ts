import { ValueType } from '@opentelemetry/api';
import { JsonMetricsSerializer, ProtobufMetricsSerializer } from '@opentelemetry/otlp-transformer';
import metricsExample from './fixtures/otlp-example-metrics.json';
import { countJsonMetricPoints, countProtobufMetricPoints, describeDroppedMetricPoints } from './metrics.counter';
import { OtlpDecodeError } from './otlp.model';
import { DEFAULT_RESOURCE, DEFAULT_SCOPE } from './testing/otel-span.fixture';

type ResourceMetricsInput = Parameters<typeof ProtobufMetricsSerializer.serializeRequest>[0];

/** sdk-metrics DataPointType and AggregationTemporality, by value. */
const HISTOGRAM = 0;
const SUM = 3;
const CUMULATIVE = 1;

const time: [number, number] = [1_764_504_000, 0];

/** Token usage as a histogram per (model, token type), and a request count, as the GenAI metrics are sent. */
function genAiMetrics(models: string[]): ResourceMetricsInput {
  const histogramPoint = (model: string, type: string) => ({
    startTime: time,
    endTime: time,
    attributes: { 'gen_ai.request.model': model, 'gen_ai.token.type': type },
    value: { buckets: { boundaries: [1, 10, 100], counts: [0, 1, 0, 0] }, count: 1, sum: 7, min: 7, max: 7 },
  });
  return {
    resource: DEFAULT_RESOURCE,
    scopeMetrics: [
      {
        scope: DEFAULT_SCOPE,
        metrics: [
          {
            descriptor: { name: 'gen_ai.client.token.usage', description: '', unit: '{token}', valueType: ValueType.INT },
            aggregationTemporality: CUMULATIVE,
            dataPointType: HISTOGRAM,
            dataPoints: models.flatMap((model) => [histogramPoint(model, 'input'), histogramPoint(model, 'output')]),
          },
          {
            descriptor: { name: 'llm.requests', description: '', unit: '1', valueType: ValueType.INT },
            aggregationTemporality: CUMULATIVE,
            dataPointType: SUM,
            isMonotonic: true,
            dataPoints: models.map((model) => ({ startTime: time, endTime: time, attributes: { model }, value: 3 })),
          },
        ],
      },
    ],
  } as unknown as ResourceMetricsInput;
}

describe('counting OTLP metric data points', () => {
  it('counts every data point of every metric, in protobuf and JSON', () => {
    const models = ['gpt-4o-mini', 'gpt-4o', 'o3'];
    const request = genAiMetrics(models);
    const expected = models.length * 2 + models.length;

    expect(countProtobufMetricPoints(ProtobufMetricsSerializer.serializeRequest(request)!)).toBe(expected);
    expect(countJsonMetricPoints(JsonMetricsSerializer.serializeRequest(request)!)).toBe(expected);
  });

  it('counts the points of the OTLP example, one metric of each kind', () => {
    const expected = metricsExample.resourceMetrics
      .flatMap((r) => r.scopeMetrics.flatMap((s) => s.metrics))
      .reduce((n, metric) => {
        const data = Object.values(metric).find((v) => typeof v === 'object' && v !== null && 'dataPoints' in v) as
          { dataPoints: unknown[] } | undefined;
        return n + (data?.dataPoints.length ?? 0);
      }, 0);

    expect(expected).toBeGreaterThan(0);
    expect(countJsonMetricPoints(JSON.stringify(metricsExample))).toBe(expected);
  });

  it('refuses malformed bodies and says what happened to the points', () => {
    const bytes = ProtobufMetricsSerializer.serializeRequest(genAiMetrics(['m']))!;
    expect(() => countProtobufMetricPoints(bytes.subarray(0, bytes.length - 2))).toThrow(OtlpDecodeError);
    expect(() => countJsonMetricPoints('"metrics"')).toThrow(OtlpDecodeError);
    expect(describeDroppedMetricPoints(1)).toMatch(/^1 metric data point was counted and not stored/);
    expect(describeDroppedMetricPoints(3)).toMatch(/^3 metric data points were counted and not stored/);
  });
});
