import { randomBytes } from 'node:crypto';
import { createGzip } from 'node:zlib';
import { Client, Metadata, credentials, type ServiceError } from '@grpc/grpc-js';
import type { Attributes } from '@opentelemetry/api';
import { JsonTraceSerializer, ProtobufLogsSerializer, ProtobufTraceSerializer } from '@opentelemetry/otlp-transformer';
import { resourceFromAttributes } from '@opentelemetry/resources';
import type { ReadableSpan } from '@opentelemetry/sdk-trace';
import { parse } from 'protobufjs';
import { SpanRecorder } from '../support';

/*
 * Raw OTLP clients for refusal tests: the OTel exporters hide status codes, bodies and trailers
 * behind an ExportResult, so these send bytes and read back exactly what the gateway answered.
 */

/** The response messages a client reads (OTLP trace_service.proto, googleapis google/rpc). */
const PROTOS = parse(
  `
  syntax = "proto3";
  message Status { int32 code = 1; string message = 2; repeated Any details = 3; }
  message Any { string type_url = 1; bytes value = 2; }
  message RetryInfo { Duration retry_delay = 1; }
  message Duration { int64 seconds = 1; int32 nanos = 2; }
  message ExportTraceServiceResponse { ExportTracePartialSuccess partial_success = 1; }
  message ExportTracePartialSuccess { int64 rejected_spans = 1; string error_message = 2; }
`,
  { keepCase: true },
).root;
const RETRY_INFO_TYPE = 'type.googleapis.com/google.rpc.RetryInfo';

function decode(type: string, bytes: Uint8Array): Record<string, unknown> {
  const message = PROTOS.lookupType(type);
  return message.toObject(message.decode(bytes), { longs: Number, defaults: false }) as Record<string, unknown>;
}

export interface HttpAnswer {
  status: number;
  /** Media type of the answer, parameters (charset) cut off. */
  type: string;
  retryAfter: string | null;
  body: Buffer;
}

export interface PostOptions {
  /** Content-Type; undefined sends none. */
  type?: string;
  key?: string;
  keyHeader?: 'authorization' | 'x-api-key';
  encoding?: string;
  /** The export path's signal: /v1/traces (default), /v1/logs or /v1/metrics. */
  signal?: 'traces' | 'logs' | 'metrics';
}

export const PROTOBUF = 'application/x-protobuf';
export const JSON_TYPE = 'application/json';

export async function postTraces(base: string, body: Uint8Array, options: PostOptions = {}): Promise<HttpAnswer> {
  const headers: Record<string, string> = {};
  if (options.type) headers['content-type'] = options.type;
  if (options.encoding) headers['content-encoding'] = options.encoding;
  if (options.key)
    headers[options.keyHeader ?? 'authorization'] = options.keyHeader === 'x-api-key' ? options.key : `Bearer ${options.key}`;
  const response = await fetch(`${base}/v1/${options.signal ?? 'traces'}`, { method: 'POST', headers, body });
  return {
    status: response.status,
    type: (response.headers.get('content-type') ?? '').split(';')[0]!.trim(),
    retryAfter: response.headers.get('retry-after'),
    body: Buffer.from(await response.arrayBuffer()),
  };
}

export interface RpcStatus {
  code: number;
  message: string;
  /** RetryInfo.retry_delay in seconds, when a RetryInfo detail is attached. */
  retryDelaySeconds?: number;
}

/** A google.rpc.Status body, read in the answer's own encoding. */
export function statusOf(answer: HttpAnswer): RpcStatus {
  if (answer.type === JSON_TYPE) {
    const json = JSON.parse(answer.body.toString('utf8')) as {
      code?: number;
      message?: string;
      details?: { '@type': string; retryDelay?: string }[];
    };
    const retry = json.details?.find((d) => d['@type'] === RETRY_INFO_TYPE);
    return {
      code: json.code ?? 0,
      message: json.message ?? '',
      ...(retry ? { retryDelaySeconds: parseFloat(retry.retryDelay ?? '') } : {}),
    };
  }
  return statusFromProtobuf(answer.body);
}

export function statusFromProtobuf(bytes: Uint8Array): RpcStatus {
  const status = decode('Status', bytes) as { code?: number; message?: string; details?: { type_url: string; value: Uint8Array }[] };
  const retry = status.details?.find((d) => d.type_url === RETRY_INFO_TYPE);
  const delay = retry
    ? (decode('RetryInfo', retry.value) as { retry_delay?: { seconds?: number; nanos?: number } }).retry_delay
    : undefined;
  return {
    code: status.code ?? 0,
    message: status.message ?? '',
    ...(retry ? { retryDelaySeconds: (delay?.seconds ?? 0) + (delay?.nanos ?? 0) / 1e9 } : {}),
  };
}

/** ExportTraceServiceResponse as a client reads it: undefined partial success means full success. */
export function exportResponseOf(answer: HttpAnswer | Buffer): { rejectedSpans: number; errorMessage: string } | undefined {
  if (!Buffer.isBuffer(answer) && answer.type === JSON_TYPE) {
    // OTLP/JSON: rejectedSpans is an int64, so a string in proto3 JSON.
    const json = JSON.parse(answer.body.toString('utf8')) as { partialSuccess?: { rejectedSpans?: string; errorMessage?: string } };
    if (!json.partialSuccess) return undefined;
    expectInt64String(json.partialSuccess.rejectedSpans);
    return { rejectedSpans: Number(json.partialSuccess.rejectedSpans ?? 0), errorMessage: json.partialSuccess.errorMessage ?? '' };
  }
  const response = decode('ExportTraceServiceResponse', Buffer.isBuffer(answer) ? answer : answer.body) as {
    partial_success?: { rejected_spans?: number; error_message?: string };
  };
  const partial = response.partial_success;
  return partial ? { rejectedSpans: partial.rejected_spans ?? 0, errorMessage: partial.error_message ?? '' } : undefined;
}

function expectInt64String(value: unknown): void {
  if (value !== undefined && (typeof value !== 'string' || !/^\d+$/.test(value)))
    throw new Error(`rejectedSpans must be an int64 string in OTLP/JSON, got ${JSON.stringify(value)}`);
}

export interface GrpcAnswer {
  code: number;
  details: string;
  /** The OK response, raw. */
  response?: Buffer;
  /** The grpc-status-details-bin trailer, decoded. */
  status?: RpcStatus;
}

const identity = (bytes: Buffer) => bytes;
const EXPORT_PATHS = {
  traces: '/opentelemetry.proto.collector.trace.v1.TraceService/Export',
  logs: '/opentelemetry.proto.collector.logs.v1.LogsService/Export',
  metrics: '/opentelemetry.proto.collector.metrics.v1.MetricsService/Export',
};

/** One unary Export (TraceService unless `signal` says otherwise) with raw bytes, metadata `authorization` unless `key` is undefined. */
export function grpcExport(
  address: string,
  body: Uint8Array,
  key?: string,
  metadataKey: 'authorization' | 'x-api-key' = 'authorization',
  signal: keyof typeof EXPORT_PATHS = 'traces',
): Promise<GrpcAnswer> {
  const client = new Client(address, credentials.createInsecure());
  const metadata = new Metadata();
  if (key !== undefined) metadata.set(metadataKey, metadataKey === 'authorization' ? `Bearer ${key}` : key);
  return new Promise<GrpcAnswer>((resolve) => {
    client.makeUnaryRequest(
      EXPORT_PATHS[signal],
      identity,
      identity,
      Buffer.from(body),
      metadata,
      { deadline: Date.now() + 15_000 },
      (error: ServiceError | null, response?: Buffer) => {
        client.close();
        if (!error) return resolve({ code: 0, details: '', response });
        const trailer = error.metadata?.get('grpc-status-details-bin')[0];
        resolve({ code: error.code, details: error.details, ...(trailer ? { status: statusFromProtobuf(trailer as Buffer) } : {}) });
      },
    );
  });
}

let traceSeq = 0;

/** `count` spans of one fresh trace recorded by the real SDK (a root and its children), 1 s apart. */
export function recordTrace(count: number, label = 'export', rootAttributes: Attributes = {}): ReadableSpan[] {
  const recorder = new SpanRecorder('refusal-tests');
  const start = Date.UTC(2025, 0, 1) + ++traceSeq * 60_000;
  const root = recorder.span(`${label} ${traceSeq}`, rootAttributes, { start, end: start + count * 1000 });
  for (let i = 1; i < count; i++)
    recorder.end(recorder.span(`${label} child ${i}`, {}, { start: start + i * 1000, end: start + i * 1000 + 500 }, root));
  recorder.end(root);
  return recorder.finished();
}

export const traceIdOf = (spans: ReadableSpan[]) => spans[0]!.spanContext().traceId;

export function protobufBody(spans: ReadableSpan[]): Uint8Array {
  const bytes = ProtobufTraceSerializer.serializeRequest(spans);
  if (!bytes) throw new Error('the OTel trace serializer returned nothing');
  return bytes;
}

export function jsonBody(spans: ReadableSpan[]): Uint8Array {
  const bytes = JsonTraceSerializer.serializeRequest(spans);
  if (!bytes) throw new Error('the OTel trace serializer returned nothing');
  return bytes;
}

export const ZERO_TRACE_ID = '0'.repeat(32);

/** The same span with a different trace id and/or end time: what a broken exporter would send. */
export function broken(span: ReadableSpan, change: { traceId?: string; endTime?: [number, number] }): ReadableSpan {
  const context = span.spanContext();
  return Object.create(span, {
    spanContext: { value: () => ({ ...context, traceId: change.traceId ?? context.traceId }) },
    ...(change.endTime ? { endTime: { value: change.endTime } } : {}),
  }) as ReadableSpan;
}

type LogRecordInput = Parameters<typeof ProtobufLogsSerializer.serializeRequest>[0][number];

/** An OTLP logs export with one record, as the OTel logs exporter sends it. */
export function logsProtobufBody(): Uint8Array {
  const record = {
    hrTime: [1_735_689_600, 0],
    hrTimeObserved: [1_735_689_600, 5],
    severityNumber: 9,
    severityText: 'INFO',
    body: 'user signed in',
    attributes: { 'user.id': 'u-1' },
    droppedAttributesCount: 0,
    resource: resourceFromAttributes({ 'service.name': 'refusal-tests' }),
    instrumentationScope: { name: 'refusal-tests', version: '1.0.0' },
  } as unknown as LogRecordInput;
  const bytes = ProtobufLogsSerializer.serializeRequest([record]);
  if (!bytes) throw new Error('the OTel logs serializer returned nothing');
  return bytes;
}

/** A key of the right shape (`sf_<12 hex>_<43 base64url>`) that no project has. */
export const unknownKey = () => `sf_${randomBytes(6).toString('hex')}_${randomBytes(32).toString('base64url')}`;

/** gzip of `size` zero bytes (~1000:1), streamed so the test never holds the inflated body. */
export async function gzipOfZeros(size: number): Promise<Buffer> {
  const gzip = createGzip({ level: 9 });
  const chunks: Buffer[] = [];
  gzip.on('data', (chunk: Buffer) => chunks.push(chunk));
  const done = new Promise((resolve) => gzip.on('end', resolve));
  const zeros = Buffer.alloc(1024 * 1024);
  for (let written = 0; written < size; written += zeros.length) {
    if (!gzip.write(zeros)) await new Promise((resolve) => gzip.once('drain', resolve));
  }
  gzip.end();
  await done;
  return Buffer.concat(chunks);
}
