import { Controller, Get, Inject, Param, Res } from '@nestjs/common';
import type { FastifyReply } from 'fastify';
import { analyseTrace } from '@spanforge/analysis';
import { TraceRepository } from '@spanforge/query';
import { isGenAiTrace, rootSpanType } from '@spanforge/semconv';
import type { Infrastructure } from '@spanforge/runtime';
import { ApiKeyScope, type ProjectScope } from '@spanforge/tenancy';
import { CurrentProject, RequireScope } from '../auth/access.decorators';
import { badInput, notFound } from '@spanforge/errors';
import { scopedClickHouse } from '../graphql/request-context';
import { INFRASTRUCTURE } from '../infrastructure.token';
import { renderWaterfall, type WaterfallSpan } from './waterfall.svg';

const TRACE_ID = /^[0-9a-f]{32}$/;

/** `GET /v1/traces/:traceId/waterfall.svg` with the project key: the trace as a picture. */
@Controller('v1/traces')
export class WaterfallController {
  constructor(@Inject(INFRASTRUCTURE) private readonly infra: Infrastructure) {}

  @RequireScope(ApiKeyScope.READ)
  @Get(':traceId/waterfall.svg')
  async waterfall(@Param('traceId') traceId: string, @CurrentProject() scope: ProjectScope, @Res() reply: FastifyReply): Promise<void> {
    const id = traceId.toLowerCase();
    if (!TRACE_ID.test(id)) throw badInput('traceId must be 32 hex characters');
    const traces = new TraceRepository(scopedClickHouse(this.infra, scope));
    const bounds = await traces.bounds(id);
    if (!bounds) throw notFound('no such trace in this project');
    const records = await traces.spans(id, bounds.start_time, bounds.end_time, false);
    const origin = records.reduce((min, r) => (BigInt(r.start_ns) < min ? BigInt(r.start_ns) : min), BigInt(records[0]?.start_ns ?? '0'));
    const { criticalPath } = analyseTrace(
      records.map((r) => ({ spanId: r.span_id, parentSpanId: r.parent_span_id, name: r.name, type: r.span_type, startNs: BigInt(r.start_ns), endNs: BigInt(r.end_ns), status: r.status_code })),
    );
    // The root of a GenAI trace shows as RUN, as in `trace` (CONTRACT section 4).
    const genAi = isGenAiTrace(records.map((r) => r.span_type));
    const spans: WaterfallSpan[] = records.map((r) => ({
      spanId: r.span_id,
      parentSpanId: r.parent_span_id || null,
      name: r.name,
      type: (r.parent_span_id === '' ? rootSpanType(r.span_type, genAi) : r.span_type) as WaterfallSpan['type'],
      startMs: Number(BigInt(r.start_ns) - origin) / 1e6,
      endMs: Number(BigInt(r.end_ns) - origin) / 1e6,
      status: r.status_code,
    }));
    const svg = renderWaterfall({ traceId: id, spans, criticalPath: criticalPath.map((s) => s.spanId) });
    await reply.status(200).header('content-type', 'image/svg+xml; charset=utf-8').header('cache-control', 'private, max-age=60').send(svg);
  }
}
