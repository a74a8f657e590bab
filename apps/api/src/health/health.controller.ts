import { Controller, Get, Header, Inject, Res } from '@nestjs/common';
import type { FastifyReply } from 'fastify';
import type { Infrastructure } from '@spanforge/runtime';
import { INFRASTRUCTURE } from '../infrastructure.token';

/** CONTRACT section 1: `/healthz` (alive), `/readyz` (every dependency reachable), `/metrics`. */
@Controller()
export class HealthController {
  constructor(@Inject(INFRASTRUCTURE) private readonly infra: Infrastructure) {}

  @Get('healthz')
  healthz(): { status: string } {
    return { status: 'ok' };
  }

  @Get('readyz')
  async readyz(@Res() reply: FastifyReply): Promise<void> {
    const report = await this.infra.readiness.run();
    await reply.status(report.ready ? 200 : 503).send(report);
  }

  @Get('metrics')
  @Header('content-type', 'text/plain; version=0.0.4; charset=utf-8')
  metrics(): Promise<string> {
    return this.infra.metrics.metrics();
  }
}
