import {
  Metadata,
  Server,
  ServerCredentials,
  ServerInterceptingCall,
  status,
  type ServerInterceptor,
  type ServerUnaryCall,
  type sendUnaryData,
  type ServiceDefinition,
} from '@grpc/grpc-js';
import { encodeExportResponse, encodeStatus, type OtlpSignal } from '@spanforge/otlp';
import type { GatewayServices } from './gateway.services';
import { admitExport } from './ingest/export-admission';
import type { GatewayMetrics } from './ingest/gateway.metrics';
import type { IngestService } from './ingest/ingest.service';

export interface OtlpGrpcServer {
  server: Server;
  port: number;
  address: string;
}

const identity = (bytes: Buffer) => bytes;

/**
 * The OTLP export services with raw bytes in and out: our own decoders read the request, so
 * grpc-js must not deserialise it (and protobufjs is not needed at run time).
 */
function exportService(service: string): ServiceDefinition {
  return {
    Export: {
      path: `/opentelemetry.proto.collector.${service}/Export`,
      requestStream: false,
      responseStream: false,
      requestSerialize: identity,
      requestDeserialize: identity,
      responseSerialize: identity,
      responseDeserialize: identity,
    },
  };
}

const SERVICES: Record<OtlpSignal, ServiceDefinition> = {
  traces: exportService('trace.v1.TraceService'),
  logs: exportService('logs.v1.LogsService'),
  metrics: exportService('metrics.v1.MetricsService'),
};

function first(metadata: Metadata, key: string): string | undefined {
  const value = metadata.get(key)[0];
  return typeof value === 'string' ? value : value?.toString('utf8');
}

const MAX_CONCURRENT_STREAMS = 64;

/**
 * The key is checked from the call's metadata before its message is read: grpc-js reads (and
 * inflates) the message only once the metadata listener lets the call go on, so a caller without
 * a key with INGEST gets its status before the server takes in up to OTLP_MAX_BODY_BYTES.
 */
function admitBeforeReading(infra: GatewayServices): ServerInterceptor {
  return (_method, call) =>
    new ServerInterceptingCall(call, {
      start: (next) =>
        next({
          onReceiveMetadata: (metadata, proceed) => {
            infra.authenticator
              .fromHeaders({ authorization: first(metadata, 'authorization'), 'x-api-key': first(metadata, 'x-api-key') })
              .then((caller) => {
                const admission = admitExport(caller);
                if (admission.admitted) proceed(metadata);
                else call.sendStatus({ code: admission.rpcCode as number as status, details: admission.message });
              })
              .catch((error: unknown) => {
                infra.log.error('OTLP/gRPC key check failed', error);
                call.sendStatus({ code: status.UNAVAILABLE, details: 'the key could not be checked; retry' });
              });
          },
        }),
    });
}

/** OTLP/gRPC on OTLP_GRPC_PORT (TraceService, LogsService, MetricsService): same decisions as OTLP/HTTP, mapped to gRPC codes (OTLP specification: RESOURCE_EXHAUSTED and UNAVAILABLE carry RetryInfo). */
export async function startOtlpGrpcServer(infra: GatewayServices, ingest: IngestService, metrics: GatewayMetrics): Promise<OtlpGrpcServer> {
  const server = new Server({
    'grpc.max_receive_message_length': infra.config.otlpMaxBodyBytes,
    'grpc.max_send_message_length': 4 * 1024 * 1024,
    // Exports in flight on one connection; an exporter sends a handful, a flood gets flow control.
    'grpc.max_concurrent_streams': MAX_CONCURRENT_STREAMS,
    interceptors: [admitBeforeReading(infra)],
  });

  const exportHandler = (signal: OtlpSignal) => (call: ServerUnaryCall<Buffer, Buffer>, callback: sendUnaryData<Buffer>) => {
    const done = (code: status, error?: { details: string; retryAfterSeconds?: number }, response?: Buffer) => {
      metrics.requests.inc({ transport: 'grpc', status: status[code] ?? String(code) });
      if (!error) return callback(null, response);
      const trailer = new Metadata();
      if (error.retryAfterSeconds !== undefined) {
        // RESOURCE_EXHAUSTED is retryable only with RetryInfo (OTLP specification); UNAVAILABLE gets it too.
        trailer.set(
          'grpc-status-details-bin',
          Buffer.from(
            encodeStatus('protobuf', code, error.details, [{ type: 'retry_info', retryDelayMs: error.retryAfterSeconds * 1000 }]),
          ),
        );
      }
      callback({ code, details: error.details, metadata: trailer });
    };
    void (async () => {
      const admission = admitExport(
        await infra.authenticator.fromHeaders({
          authorization: first(call.metadata, 'authorization'),
          'x-api-key': first(call.metadata, 'x-api-key'),
        }),
      );
      if (!admission.admitted) return done(admission.rpcCode as number as status, { details: admission.message });
      const scope = admission.project;
      const decision = await ingest.take(signal, scope, 'protobuf', call.request);
      switch (decision.outcome) {
        case 'accepted':
          return done(status.OK, undefined, Buffer.from(encodeExportResponse('protobuf', decision.rejected, decision.message, signal)));
        case 'invalid':
          return done(status.INVALID_ARGUMENT, { details: decision.message });
        case 'rate_limited':
          return done(status.RESOURCE_EXHAUSTED, { details: decision.message, retryAfterSeconds: decision.retryAfterSeconds });
        case 'unavailable':
          return done(status.UNAVAILABLE, { details: decision.message, retryAfterSeconds: decision.retryAfterSeconds });
      }
    })().catch((error: Error) => {
      infra.log.error('OTLP/gRPC export failed', error);
      done(status.INTERNAL, { details: 'internal error' });
    });
  };
  for (const [signal, service] of Object.entries(SERVICES)) server.addService(service, { Export: exportHandler(signal as OtlpSignal) });

  const port = await new Promise<number>((resolve, reject) =>
    server.bindAsync(`${infra.config.host}:${infra.config.ports.otlpGrpc}`, ServerCredentials.createInsecure(), (error, bound) =>
      error ? reject(error) : resolve(bound),
    ),
  );
  infra.shutdown.add(
    'stop-accepting',
    'OTLP/gRPC server',
    () =>
      new Promise<void>((resolve) => {
        // In-flight exports finish; after 5 s the rest are cut.
        const force = setTimeout(() => server.forceShutdown(), 5_000);
        server.tryShutdown(() => {
          clearTimeout(force);
          resolve();
        });
      }),
  );
  return { server, port, address: `localhost:${port}` };
}
