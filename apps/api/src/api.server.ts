import { NestFactory } from '@nestjs/core';
import { FastifyAdapter, type NestFastifyApplication } from '@nestjs/platform-fastify';
import type { Infrastructure } from '@spanforge/runtime';
import { ApiModule } from './api.module';
import type { GraphqlDriver } from './graphql/graphql.drivers';

export interface RunningServer {
  url: string;
  port: number;
  close(): Promise<void>;
}

/** Starts GraphQL + REST on API_PORT and registers its shutdown step (stop accepting first). */
export async function startApiServer(infra: Infrastructure, options: { driver?: GraphqlDriver } = {}): Promise<RunningServer> {
  const app = await NestFactory.create<NestFastifyApplication>(ApiModule.forRoot(infra, options.driver), new FastifyAdapter({ bodyLimit: 1024 * 1024 }), {
    logger: infra.config.logLevel === 'debug' ? ['error', 'warn', 'log', 'debug'] : ['error', 'warn'],
    abortOnError: false,
  });
  await app.listen(infra.config.ports.api, infra.config.host);
  const address = app.getHttpServer().address();
  const port = typeof address === 'object' && address ? address.port : infra.config.ports.api;
  const close = () => app.close();
  infra.shutdown.add('stop-accepting', 'api server', close);
  return { url: `http://localhost:${port}`, port, close };
}
