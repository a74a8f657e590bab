import type { Infrastructure } from '@spanforge/runtime';
import { startOtlpGrpcServer } from './otlp-grpc.server';
import { startOtlpHttpServer } from './otlp-http.server';

/** Starts both OTLP receivers; returns the banner lines. */
export async function startGateway(infra: Infrastructure): Promise<string[]> {
  const http = await startOtlpHttpServer(infra);
  const grpc = await startOtlpGrpcServer(infra);
  return [`OTLP/HTTP  ${http.url}/v1/traces`, `OTLP/gRPC  ${grpc.address}`];
}
