import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Metadata } from '@grpc/grpc-js';
import { context, trace, ValueType, type Span } from '@opentelemetry/api';
import { ExportResultCode, type ExportResult } from '@opentelemetry/core';
import { OTLPLogExporter as GrpcLogExporter } from '@opentelemetry/exporter-logs-otlp-grpc';
import { OTLPLogExporter as JsonLogExporter } from '@opentelemetry/exporter-logs-otlp-http';
import { OTLPLogExporter as ProtoLogExporter } from '@opentelemetry/exporter-logs-otlp-proto';
import { OTLPMetricExporter as JsonMetricExporter } from '@opentelemetry/exporter-metrics-otlp-http';
import { OTLPMetricExporter as ProtoMetricExporter } from '@opentelemetry/exporter-metrics-otlp-proto';
import { resourceFromAttributes } from '@opentelemetry/resources';
import { InMemoryLogRecordExporter, LoggerProvider, SimpleLogRecordProcessor, type LogRecordExporter } from '@opentelemetry/sdk-logs';
import { MeterProvider, MetricReader, type ResourceMetrics } from '@opentelemetry/sdk-metrics';
import { graphql } from '../support';
import { exportSpans, exportSucceeded, otlpExporter, SpanRecorder, type Transport } from '../support/otel';
import { plainOfAnyValue } from '../support/otlp-json-spans';
import { startIngestHarness, type IngestHarness } from './ingest-harness';
import { JSON_TYPE, PROTOBUF, grpcExport, postTraces } from './raw-otlp';

/*
 * GenAI events sent as OTLP log records (how the OpenAI instrumentations send prompts and
 * completions) become the message contents and events of the span they were emitted in, whichever
 * arrives first; other log records are counted and answered as not stored. Metrics are counted and
 * answered the same way, never refused.
 */

const FIXTURES = join(__dirname, '..', 'fixtures', 'python');
type OtlpValue = Record<string, unknown>;
type OtlpJson = { resourceLogs?: unknown[]; resourceSpans?: unknown[] };

function fixture(name: string): OtlpJson {
  return JSON.parse(readFileSync(join(FIXTURES, name), 'utf8')) as OtlpJson;
}

interface Record_ {
  eventName: string;
  spanId: string;
  body: Record<string, unknown> | null;
  attributes: Record<string, unknown>;
}

function logRecordsOf(json: OtlpJson): Record_[] {
  const records: Record_[] = [];
  for (const resource of json.resourceLogs as Array<{ scopeLogs: Array<{ logRecords: OtlpValue[] }> }>)
    for (const scope of resource.scopeLogs)
      for (const record of scope.logRecords)
        records.push({
          eventName: record.eventName as string,
          spanId: record.spanId as string,
          body: plainOfAnyValue(record.body as OtlpValue) as Record<string, unknown> | null,
          attributes: Object.fromEntries(
            ((record.attributes as OtlpValue[]) ?? []).map((kv) => [kv.key, plainOfAnyValue(kv.value as OtlpValue)]),
          ),
        });
  return records;
}

function spansOf(json: OtlpJson): Array<{ traceId: string; spanId: string; name: string }> {
  return (json.resourceSpans as Array<{ scopeSpans: Array<{ spans: Array<{ traceId: string; spanId: string; name: string }> }> }>).flatMap(
    (resource) => resource.scopeSpans.flatMap((scope) => scope.spans),
  );
}

interface Detail {
  input: string | null;
  output: string | null;
  events: Array<{ name: string; time: string; attributes: Record<string, unknown> }>;
}

describe('OTLP logs and metrics', () => {
  let h: IngestHarness;
  let api: string;

  beforeAll(async () => {
    h = await startIngestHarness();
    api = h.api;
  });
  afterAll(() => h?.stop());

  const post = (signal: 'traces' | 'logs' | 'metrics', body: unknown, key: string) =>
    postTraces(h.http, Buffer.from(typeof body === 'string' ? body : JSON.stringify(body)), { type: JSON_TYPE, key, signal });

  async function waitForLogEvents(projectId: string, count: number): Promise<void> {
    const deadline = Date.now() + 20_000;
    for (;;) {
      const [row] = await h.query<{ n: string }>('SELECT count() AS n FROM span_log_events FINAL WHERE project_id = {projectId:String}', {
        projectId,
      });
      if (Number(row?.n ?? 0) >= count) return;
      if (Date.now() > deadline) throw new Error(`only ${row?.n} of ${count} log events stored`);
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  }

  async function detail(key: string, traceId: string, spanId: string): Promise<Detail> {
    const answer = await graphql<{ spanDetail: Detail }>(
      api,
      'query($t: String!, $s: String!) { spanDetail(traceId: $t, spanId: $s) { input output events { name time attributes } } }',
      { t: traceId, s: spanId },
      key,
    );
    expect(answer.errors).toBeUndefined();
    return answer.data!.spanDetail;
  }

  it('gives the Python OpenAI v2 instrumentation’s per-message events to their chat spans, sent before the spans', async () => {
    const project = await h.newProject('openai-v2-events');
    const logs = fixture('openai-v2-events.logs.json');
    const traces = fixture('openai-v2-events.traces.json');
    const records = logRecordsOf(logs);

    // Events first: the spans come in a later export, as a BatchLogRecordProcessor may well send them.
    const logsAnswer = await post('logs', logs, project.apiKey);
    expect(logsAnswer.status).toBe(200);
    expect(JSON.parse(logsAnswer.body.toString())).toStrictEqual({});
    await waitForLogEvents(project.projectId, records.length);
    expect((await post('traces', traces, project.apiKey)).status).toBe(200);
    const spans = spansOf(traces);
    await h.waitForSpans(project.projectId, spans.length);

    for (const chat of spans.filter((span) => span.name.startsWith('chat '))) {
      const own = records.filter((record) => record.spanId === chat.spanId);
      const got = await detail(project.apiKey, chat.traceId, chat.spanId);
      const input = JSON.parse(got.input!) as Array<{ role: string; parts: Array<Record<string, unknown>> }>;

      // One input message per message event, in the order sent, with its role, text and tool calls.
      const sent = own.filter((record) => record.eventName !== 'gen_ai.choice');
      expect(input.map((message) => message.role)).toStrictEqual(sent.map((record) => record.eventName.split('.')[1]));
      for (const [index, record] of sent.entries()) {
        const body = record.body!;
        const parts = input[index]!.parts;
        if (record.eventName === 'gen_ai.tool.message') {
          expect(parts).toStrictEqual([{ type: 'tool_call_response', response: body.content, id: body.id }]);
        } else if (Array.isArray(body.tool_calls)) {
          expect(parts).toStrictEqual(
            (body.tool_calls as Array<{ id: string; function: { name: string; arguments: string } }>).map((call) => ({
              type: 'tool_call',
              id: call.id,
              name: call.function.name,
              arguments: call.function.arguments,
            })),
          );
        } else {
          expect(parts).toStrictEqual([{ type: 'text', content: body.content }]);
        }
      }

      // The choice is the output, with its finish reason.
      const choice = own.find((record) => record.eventName === 'gen_ai.choice')!.body!;
      const message = choice.message as { content?: string; tool_calls?: unknown[] };
      const output = JSON.parse(got.output!) as Array<{
        role: string;
        finish_reason: string;
        parts: Array<{ type: string; content?: string }>;
      }>;
      expect(output).toHaveLength(1);
      expect(output[0]!.finish_reason).toBe(choice.finish_reason);
      expect(output[0]!.parts.map((part) => part.type)).toStrictEqual(
        message.tool_calls ? message.tool_calls.map(() => 'tool_call') : ['text'],
      );
      if (message.content) expect(output[0]!.parts[0]!.content).toBe(message.content);

      // Every event is among the span's events, with its facts and without its contents.
      const events = got.events.filter((event) => event.name.startsWith('gen_ai.'));
      expect(events.map((event) => event.name)).toStrictEqual(own.map((record) => record.eventName));
      expect(events.every((event) => event.attributes['gen_ai.system'] === 'openai' && !('content' in event.attributes))).toBe(true);
    }
  });

  it('takes the operation details event of the latest GenAI conventions, sent after the spans, as it is', async () => {
    const project = await h.newProject('openai-v2-latest');
    const logs = fixture('openai-v2-latest.logs.json');
    const traces = fixture('openai-v2-latest.traces.json');
    const spans = spansOf(traces);
    expect((await post('traces', traces, project.apiKey)).status).toBe(200);
    await h.waitForSpans(project.projectId, spans.length);
    const records = logRecordsOf(logs);
    expect((await post('logs', logs, project.apiKey)).status).toBe(200);
    await waitForLogEvents(project.projectId, records.length);

    for (const record of records) {
      const span = spans.find((s) => s.spanId === record.spanId)!;
      const got = await detail(project.apiKey, span.traceId, span.spanId);
      expect(JSON.parse(got.input!)).toStrictEqual(record.attributes['gen_ai.input.messages']);
      expect(JSON.parse(got.output!)).toStrictEqual(record.attributes['gen_ai.output.messages']);
      const event = got.events.find((e) => e.name === 'gen_ai.client.inference.operation.details')!;
      expect(event.attributes).not.toHaveProperty('gen_ai.input.messages');
      expect(event.attributes['gen_ai.operation.name']).toBe(record.attributes['gen_ai.operation.name']);
    }
  });

  const exporters: Record<Transport, (key: string) => LogRecordExporter> = {
    'http/protobuf': (key) => new ProtoLogExporter({ url: `${h.http}/v1/logs`, headers: { authorization: `Bearer ${key}` } }),
    'http/json': (key) => new JsonLogExporter({ url: `${h.http}/v1/logs`, headers: { authorization: `Bearer ${key}` } }),
    grpc: (key) => {
      const metadata = new Metadata();
      metadata.set('authorization', `Bearer ${key}`);
      return new GrpcLogExporter({ url: `http://${h.grpc}`, metadata });
    },
  };

  it.each(Object.keys(exporters) as Transport[])(
    'takes GenAI events from the OpenTelemetry JS logs exporter over %s, and leaves the other records out',
    async (transport) => {
      const project = await h.newProject(`logs-${transport}`);
      const recorder = new SpanRecorder('logs-agent');
      const now = Date.now();
      const chat = recorder.span(
        'chat gpt-4o-mini',
        { 'gen_ai.operation.name': 'chat', 'gen_ai.request.model': 'gpt-4o-mini' },
        { start: now, end: now + 800 },
      );
      // The SDK keeps the records in memory; the test sends them through the real exporter in one export.
      const memory = new InMemoryLogRecordExporter();
      const logs = new LoggerProvider({
        resource: resourceFromAttributes({ 'service.name': 'logs-agent' }),
        processors: [new SimpleLogRecordProcessor({ exporter: memory })],
      });
      const logger = logs.getLogger('opentelemetry.instrumentation.openai_v2');
      const inSpan = trace.setSpan(context.active(), chat as Span);
      const question = `What is ${transport} good for?`;
      const answer = `Sending telemetry (${transport}).`;
      logger.emit({
        eventName: 'gen_ai.user.message',
        body: { content: question },
        attributes: { 'gen_ai.system': 'openai' },
        context: inSpan,
      });
      logger.emit({
        eventName: 'gen_ai.choice',
        body: { index: 0, finish_reason: 'stop', message: { role: 'assistant', content: answer } },
        attributes: { 'gen_ai.system': 'openai' },
        context: inSpan,
      });
      logger.emit({ body: 'an application log line', severityText: 'INFO', context: inSpan });
      logger.emit({ eventName: 'gen_ai.user.message', body: { content: 'no span here' } });
      recorder.end(chat);
      await logs.forceFlush();

      const exporter = exporters[transport](project.apiKey);
      const result = await new Promise<ExportResult>((resolve) => exporter.export(memory.getFinishedLogRecords(), resolve));
      await exporter.shutdown();
      expect(result.error?.message).toBeUndefined();
      expect(result.code).toBe(ExportResultCode.SUCCESS);
      expect(
        exportSucceeded(
          await exportSpans(otlpExporter('http/protobuf', { http: h.http, grpc: h.grpc }, project.apiKey), recorder.finished()),
        ),
      ).toBe(true);
      await h.waitForSpans(project.projectId, 1);
      await waitForLogEvents(project.projectId, 2);

      const got = await detail(project.apiKey, chat.spanContext().traceId, chat.spanContext().spanId);
      expect(JSON.parse(got.input!)).toStrictEqual([{ role: 'user', parts: [{ type: 'text', content: question }] }]);
      expect(JSON.parse(got.output!)).toStrictEqual([
        { role: 'assistant', parts: [{ type: 'text', content: answer }], finish_reason: 'stop' },
      ]);
      expect(got.events.map((event) => event.name)).toStrictEqual(['gen_ai.user.message', 'gen_ai.choice']);
    },
  );

  it('answers the records it does not keep in the partial success, protobuf and gRPC alike', async () => {
    const project = await h.newProject('dropped-logs');
    const memory = new InMemoryLogRecordExporter();
    const logs = new LoggerProvider({ processors: [new SimpleLogRecordProcessor({ exporter: memory })] });
    const logger = logs.getLogger('app');
    for (let i = 0; i < 3; i++) logger.emit({ body: `line ${i}` });
    await logs.forceFlush();
    const { ProtobufLogsSerializer } = await import('@opentelemetry/otlp-transformer');
    const body = ProtobufLogsSerializer.serializeRequest(memory.getFinishedLogRecords())!;

    const http = await postTraces(h.http, body, { type: PROTOBUF, key: project.apiKey, signal: 'logs' });
    expect(http.status).toBe(200);
    expect(ProtobufLogsSerializer.deserializeResponse(http.body)).toStrictEqual({
      partialSuccess: {
        rejectedLogRecords: 3,
        errorMessage: expect.stringMatching(/^3 of 3 log records were counted and not stored: 3 records not GenAI events/),
      },
    });
    const grpc = await grpcExport(h.grpc, body, project.apiKey, 'authorization', 'logs');
    expect(grpc.code).toBe(0);
    expect(ProtobufLogsSerializer.deserializeResponse(grpc.response!)).toStrictEqual(ProtobufLogsSerializer.deserializeResponse(http.body));
    // A logs export without a key is refused like a traces export.
    expect((await postTraces(h.http, body, { type: PROTOBUF, signal: 'logs' })).status).toBe(401);
  });

  it('answers metrics exports with every data point counted and not stored, never an error', async () => {
    const project = await h.newProject('metrics');
    const reader = new (class extends MetricReader {
      protected async onForceFlush() {}
      protected async onShutdown() {}
    })();
    const meters = new MeterProvider({ readers: [reader] });
    const meter = meters.getMeter('openllmetry');
    const tokens = meter.createHistogram('gen_ai.client.token.usage', { valueType: ValueType.INT });
    const models = ['gpt-4o-mini', 'gpt-4o'];
    for (const model of models)
      for (const type of ['input', 'output']) tokens.record(100, { 'gen_ai.request.model': model, 'gen_ai.token.type': type });
    const { resourceMetrics } = await reader.collect();
    const points = models.length * 2;

    for (const exporter of [
      new ProtoMetricExporter({ url: `${h.http}/v1/metrics`, headers: { authorization: `Bearer ${project.apiKey}` } }),
      new JsonMetricExporter({ url: `${h.http}/v1/metrics`, headers: { authorization: `Bearer ${project.apiKey}` } }),
    ]) {
      const result = await new Promise<ExportResult>((resolve) => exporter.export(resourceMetrics as ResourceMetrics, resolve));
      expect(result.code).toBe(ExportResultCode.SUCCESS);
      await exporter.shutdown();
    }
    const { JsonMetricsSerializer } = await import('@opentelemetry/otlp-transformer');
    const raw = await postTraces(h.http, JsonMetricsSerializer.serializeRequest(resourceMetrics)!, {
      type: JSON_TYPE,
      key: project.apiKey,
      signal: 'metrics',
    });
    expect(raw.status).toBe(200);
    expect(JSON.parse(raw.body.toString())).toStrictEqual({
      partialSuccess: {
        rejectedDataPoints: String(points),
        errorMessage: expect.stringMatching(new RegExp(`^${points} metric data points were counted and not stored`)),
      },
    });
    await meters.shutdown();
  });
});
