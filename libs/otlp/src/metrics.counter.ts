import { arrayField, describeJson, field, isJsonObject } from './json-value.decoder';
import { parseJsonBody } from './json.decoder';
import { OtlpDecodeError } from './otlp.model';
import { LEN, MessageSchema, WireReader } from './wire.reader';

/*
 * OTLP metrics are not stored: spans carry the same figures per call (tokens, latency, cost) and
 * more. An exporter that sends them anyway (OpenLLMetry does by default) gets an honest answer,
 * every data point counted and reported as not stored in the partial success, instead of a 404
 * it would log forever. Counting walks the message without decoding values
 * (collector/metrics/v1/metrics_service.proto, metrics/v1/metrics.proto).
 */

const REQUEST: MessageSchema = { name: 'ExportMetricsServiceRequest', fields: { 1: ['resource_metrics', LEN] } };
const RESOURCE_METRICS: MessageSchema = { name: 'ResourceMetrics', fields: { 2: ['scope_metrics', LEN] } };
const SCOPE_METRICS: MessageSchema = { name: 'ScopeMetrics', fields: { 2: ['metrics', LEN] } };
const METRIC: MessageSchema = {
  name: 'Metric',
  fields: { 5: ['gauge', LEN], 7: ['sum', LEN], 9: ['histogram', LEN], 10: ['exponential_histogram', LEN], 11: ['summary', LEN] },
};
const POINTS: MessageSchema = { name: 'Metric data', fields: { 1: ['data_points', LEN] } };

/** Tags of Metric's data oneof members (gauge = 5, sum = 7, histogram = 9, exponential_histogram = 10, summary = 11; all LEN). */
const DATA_TAGS = new Set([0x2a, 0x3a, 0x4a, 0x52, 0x5a]);

/** The number of data points in a binary ExportMetricsServiceRequest; OtlpDecodeError when malformed. */
export function countProtobufMetricPoints(bytes: Uint8Array): number {
  const reader = new WireReader(bytes);
  let points = 0;
  // Each level: walk the fields of [pos, end), descending into `into` (tag) and counting `count` (tag) at the last level.
  const walk = (end: number, schema: MessageSchema, visit: (tag: number, end: number) => boolean): void => {
    while (reader.pos < end) {
      const tag = reader.uint32(schema.name);
      if (!visit(tag, end)) reader.skipField(tag, schema, end);
    }
    reader.expectEnd(end, schema.name);
  };
  walk(reader.length, REQUEST, (tag, end) => {
    if (tag !== 0x0a) return false;
    walk(reader.lengthEnd('resource_metrics', end), RESOURCE_METRICS, (resourceTag, resourceEnd) => {
      if (resourceTag !== 0x12) return false;
      walk(reader.lengthEnd('scope_metrics', resourceEnd), SCOPE_METRICS, (scopeTag, scopeEnd) => {
        if (scopeTag !== 0x12) return false;
        walk(reader.lengthEnd('metrics', scopeEnd), METRIC, (metricTag, metricEnd) => {
          if (!DATA_TAGS.has(metricTag)) return false;
          walk(reader.lengthEnd('Metric data', metricEnd), POINTS, (pointTag) => {
            if (pointTag === 0x0a) points++;
            return false; // skipped (read past) either way
          });
          return true;
        });
        return true;
      });
      return true;
    });
    return true;
  });
  return points;
}

const DATA_FIELDS: [string, string][] = [
  ['gauge', 'gauge'],
  ['sum', 'sum'],
  ['histogram', 'histogram'],
  ['exponentialHistogram', 'exponential_histogram'],
  ['summary', 'summary'],
];

/** The number of data points in an OTLP/JSON ExportMetricsServiceRequest. */
export function countJsonMetricPoints(body: string | Uint8Array): number {
  const request = parseJsonBody(body);
  if (!isJsonObject(request))
    throw new OtlpDecodeError(`an OTLP/JSON metrics export must be an object like {"resourceMetrics": […]}, got ${describeJson(request)}`);
  let points = 0;
  arrayField(request, 'resourceMetrics', 'resource_metrics', 'body').forEach((resource, r) => {
    if (!isJsonObject(resource)) throw new OtlpDecodeError(`resourceMetrics[${r}] must be an object, got ${describeJson(resource)}`);
    arrayField(resource, 'scopeMetrics', 'scope_metrics', `resourceMetrics[${r}]`).forEach((scope, s) => {
      if (!isJsonObject(scope)) return;
      arrayField(scope, 'metrics', 'metrics', `resourceMetrics[${r}].scopeMetrics[${s}]`).forEach((metric) => {
        if (!isJsonObject(metric)) return;
        for (const [camel, snake] of DATA_FIELDS) {
          const data = field(metric, camel, snake);
          const dataPoints = isJsonObject(data) ? field(data, 'dataPoints', 'data_points') : undefined;
          if (Array.isArray(dataPoints)) points += dataPoints.length;
        }
      });
    });
  });
  return points;
}

/** The partial-success message of a metrics export. */
export function describeDroppedMetricPoints(points: number): string {
  return `${points} metric data ${points === 1 ? 'point was' : 'points were'} counted and not stored: spanforge keeps traces (the same tokens, latency and cost per call) and GenAI log events; OTEL_METRICS_EXPORTER=none stops an SDK sending metrics`;
}
