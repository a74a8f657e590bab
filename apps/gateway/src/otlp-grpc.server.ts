import { Server, ServerCredentials } from '@grpc/grpc-js';
import type { Infrastructure } from '@spanforge/runtime';

export interface OtlpGrpcServer {
  server: Server;
  port: number;
  address: string;
}

/** OTLP/gRPC receiver on OTLP_GRPC_PORT. */
export async function startOtlpGrpcServer(infra: Infrastructure): Promise<OtlpGrpcServer> {
  const server = new Server({ 'grpc.max_receive_message_length': infra.config.otlpMaxBodyBytes });
  const port = await new Promise<number>((resolve, reject) =>
    server.bindAsync(`${infra.config.host}:${infra.config.ports.otlpGrpc}`, ServerCredentials.createInsecure(), (error, bound) => (error ? reject(error) : resolve(bound))),
  );
  infra.shutdown.add(
    'stop-accepting',
    'OTLP/gRPC server',
    () =>
      new Promise<void>((resolve) => {
        // In-flight exports finish; a second timer forces the rest closed.
        const force = setTimeout(() => server.forceShutdown(), 5_000);
        server.tryShutdown(() => {
          clearTimeout(force);
          resolve();
        });
      }),
  );
  return { server, port, address: `localhost:${port}` };
}
