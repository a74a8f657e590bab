import { context, trace, type Attributes, type Span, type SpanStatusCode, type Tracer } from '@opentelemetry/api';
import { ExportResultCode, type ExportResult } from '@opentelemetry/core';
import { resourceFromAttributes } from '@opentelemetry/resources';
import { InMemorySpanExporter, SimpleSpanProcessor, TracerProvider, type ReadableSpan, type SpanExporter } from '@opentelemetry/sdk-trace';
import { OTLPTraceExporter as ProtoExporter } from '@opentelemetry/exporter-trace-otlp-proto';
import { OTLPTraceExporter as JsonExporter } from '@opentelemetry/exporter-trace-otlp-http';
import { OTLPTraceExporter as GrpcExporter } from '@opentelemetry/exporter-trace-otlp-grpc';
import { Metadata } from '@grpc/grpc-js';

export type Transport = 'http/protobuf' | 'http/json' | 'grpc';

/** The real OpenTelemetry JS exporter for a transport, pointed at our gateway with a project key. */
export function otlpExporter(
  transport: Transport,
  endpoints: { http: string; grpc: string },
  apiKey: string,
  compression: 'gzip' | 'none' = 'none',
): SpanExporter {
  const headers = { authorization: `Bearer ${apiKey}` };
  if (transport === 'http/protobuf')
    return new ProtoExporter({ url: `${endpoints.http}/v1/traces`, headers, compression: compression as never });
  if (transport === 'http/json')
    return new JsonExporter({ url: `${endpoints.http}/v1/traces`, headers, compression: compression as never });
  const metadata = new Metadata();
  metadata.set('authorization', `Bearer ${apiKey}`);
  return new GrpcExporter({ url: endpoints.grpc, metadata, compression: compression as never });
}

/** Sends spans through an exporter in one export call; resolves with the exporter's result. */
export function exportSpans(exporter: SpanExporter, spans: ReadableSpan[]): Promise<ExportResult> {
  return new Promise((resolve) => exporter.export(spans, resolve));
}

export function exportSucceeded(result: ExportResult): boolean {
  return result.code === ExportResultCode.SUCCESS;
}

/**
 * Records spans with a real SDK tracer into memory, so a test can build an agent trace, compute its
 * expected figures from the very spans, and then send them through any exporter.
 */
export class SpanRecorder {
  private readonly memory = new InMemorySpanExporter();
  private readonly provider: TracerProvider;
  readonly tracer: Tracer;

  constructor(serviceName = 'e2e-agent', resource: Attributes = {}) {
    this.provider = new TracerProvider({
      resource: resourceFromAttributes({ 'service.name': serviceName, ...resource }),
      spanProcessors: [new SimpleSpanProcessor({ exporter: this.memory })],
    });
    this.tracer = this.provider.getTracer('spanforge-e2e', '1.0.0');
  }

  /** Runs `body` inside a span that ends at `end` (ms since epoch) — explicit times keep tests deterministic. */
  span(
    name: string,
    attributes: Attributes,
    times: { start: number; end: number },
    parent?: Span,
    status?: { code: SpanStatusCode; message?: string },
  ): Span {
    const ctx = parent ? trace.setSpan(context.active(), parent) : context.active();
    const span = this.tracer.startSpan(name, { attributes, startTime: times.start, root: !parent }, ctx);
    if (status) span.setStatus(status);
    return Object.assign(span, { plannedEnd: times.end });
  }

  end(span: Span): void {
    span.end((span as Span & { plannedEnd: number }).plannedEnd);
  }

  finished(): ReadableSpan[] {
    return this.memory.getFinishedSpans();
  }

  reset(): void {
    this.memory.reset();
  }
}
