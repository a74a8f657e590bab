import { Controller, Get, Header, Inject, Res } from '@nestjs/common';
import type { FastifyReply } from 'fastify';
import { Registry } from 'prom-client';
import type { AppConfig } from '@spanforge/config';
import { CONFIG, ReadinessProbe } from '@spanforge/runtime';
import { Public } from '../auth/access.decorators';

/** `/healthz` (alive), `/readyz` (every dependency reachable), `/metrics`, and the index page: open to anyone. */
@Public()
@Controller()
export class HealthController {
  constructor(
    @Inject(CONFIG) private readonly config: AppConfig,
    private readonly readiness: ReadinessProbe,
    private readonly registry: Registry,
  ) {}

  /** What a person opening the API's address in a browser is looking for: where things are. */
  @Get()
  index(): Record<string, unknown> {
    return {
      service: 'spanforge API',
      graphql: 'POST /graphql with a project API key as bearer (admin token for tenants, projects and keys)',
      explorer: 'GET /graphiql: GraphiQL in the browser, with a field for your API key and the schema documented field by field',
      feedback: 'POST /v1/feedback',
      waterfall: 'GET /v1/traces/:traceId/waterfall.svg',
      reports: 'GET /v1/reports/:id.csv, /v1/reports/:id.html',
      health: ['/healthz', '/readyz', '/metrics'],
      otlp: `OTLP traces go to the gateway: http://<host>:${this.config.ports.otlpHttp}/v1/traces (HTTP), port ${this.config.ports.otlpGrpc} (gRPC)`,
    };
  }

  @Get('healthz')
  healthz(): { status: string } {
    return { status: 'ok' };
  }

  @Get('readyz')
  async readyz(@Res() reply: FastifyReply): Promise<void> {
    const report = await this.readiness.run();
    await reply.status(report.ready ? 200 : 503).send(report);
  }

  @Get('metrics')
  @Header('content-type', 'text/plain; version=0.0.4; charset=utf-8')
  metrics(): Promise<string> {
    return this.registry.metrics();
  }
}
