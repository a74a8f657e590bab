import logsExample from './fixtures/otlp-example-logs.json';
import metricsExample from './fixtures/otlp-example-metrics.json';
import { decodeJsonExport } from './json.decoder';
import { OtlpDecodeError } from './otlp.model';
import { readableSpan, toJson } from './testing/otel-span.fixture';
import { Json, snakeCased, spansOf } from './testing/otlp-json.fixture';

describe('decodeJsonExport on bodies it cannot use', () => {
  it('says the body is not JSON', () => {
    expect(() => decodeJsonExport('{"resourceSpans": [')).toThrow(OtlpDecodeError);
    expect(() => decodeJsonExport('resourceSpans')).toThrow(/^the body is not valid JSON: /);
  });

  it.each([
    ['an array', '[]'],
    ['a string', '"spans"'],
    ['null', 'null'],
    ['a number', '42'],
  ])('says the top level must be an object when it is %s', (description, text) => {
    expect(() => decodeJsonExport(text)).toThrow(
      `an OTLP/JSON trace export must be an object like {"resourceSpans": […]}, got ${description}`,
    );
  });

  it('says so when there is no body value at all', () => {
    expect(() => decodeJsonExport(undefined)).toThrow('must be an object like {"resourceSpans": […]}, got nothing');
  });

  it('names the path of a container with the wrong type', () => {
    expect(() => decodeJsonExport({ resourceSpans: {} })).toThrow('body.resourceSpans must be an array, got an object');
    expect(() => decodeJsonExport({ resourceSpans: [{ scopeSpans: [{ spans: 'x' }] }] })).toThrow(
      'resourceSpans[0].scopeSpans[0].spans must be an array, got a string',
    );
    expect(() => decodeJsonExport({ resourceSpans: [{ scopeSpans: [{ spans: [{}, 7] }] }] })).toThrow(
      'resourceSpans[0].scopeSpans[0].spans[1] must be an object, got a number',
    );
    expect(() => decodeJsonExport({ resourceSpans: [{ scopeSpans: [{ spans: [{ attributes: 'a=b' }] }] }] })).toThrow(
      'resourceSpans[0].scopeSpans[0].spans[0].attributes must be a list of {"key": …, "value": …} or an object, got a string',
    );
    expect(() => decodeJsonExport({ resourceSpans: [{ scopeSpans: [{ spans: [{ attributes: [['k', 'v']] }] }] }] })).toThrow(
      'resourceSpans[0].scopeSpans[0].spans[0].attributes[0] must be a {"key": …, "value": …} object, got an array',
    );
    expect(() => decodeJsonExport({ resourceSpans: [{ resource: [] }] })).toThrow(
      'resourceSpans[0].resource must be an object, got an array',
    );
  });

  it('refuses the OTLP logs and metrics examples, saying where they go', () => {
    expect(() => decodeJsonExport(JSON.stringify(logsExample))).toThrow(
      'sent to the traces endpoint: send logs to /v1/logs (OTEL_EXPORTER_OTLP_LOGS_ENDPOINT, or OTEL_EXPORTER_OTLP_ENDPOINT for all signals)',
    );
    expect(() => decodeJsonExport(JSON.stringify(metricsExample))).toThrow(
      'sent to the traces endpoint: send metrics to /v1/metrics (OTEL_EXPORTER_OTLP_METRICS_ENDPOINT, or OTEL_EXPORTER_OTLP_ENDPOINT for all signals)',
    );
    expect(() => decodeJsonExport(snakeCased(logsExample))).toThrow('send logs to /v1/logs');
  });

  it('refuses values nested deeper than 100 levels', () => {
    let value: Json = { stringValue: 'bottom' };
    for (let depth = 0; depth < 150; depth++) value = { arrayValue: { values: [value] } };
    const request = JSON.parse(toJson([readableSpan()]));
    spansOf(request)[0].attributes = [{ key: 'deep', value }];

    expect(() => decodeJsonExport(request)).toThrow('JSON body nests AnyValues deeper than 100 levels');
  });
});
