import Fastify, { type FastifyInstance } from 'fastify';
import type { Infrastructure } from '@spanforge/runtime';

export interface OtlpHttpServer {
  app: FastifyInstance;
  url: string;
  port: number;
}

/** OTLP/HTTP receiver on OTLP_HTTP_PORT, with `/healthz` and `/readyz` as on the API port. */
export async function startOtlpHttpServer(infra: Infrastructure): Promise<OtlpHttpServer> {
  const app = Fastify({ logger: false, bodyLimit: infra.config.otlpMaxBodyBytes });
  app.get('/healthz', async () => ({ status: 'ok' }));
  app.get('/readyz', async (_request, reply) => {
    const report = await infra.readiness.run();
    return reply.status(report.ready ? 200 : 503).send(report);
  });
  await app.listen({ port: infra.config.ports.otlpHttp, host: infra.config.host });
  infra.shutdown.add('stop-accepting', 'OTLP/HTTP server', () => app.close());
  const address = app.server.address();
  const port = typeof address === 'object' && address ? address.port : infra.config.ports.otlpHttp;
  return { app, url: `http://localhost:${port}`, port };
}
