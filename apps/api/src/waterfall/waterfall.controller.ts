import { Controller, Get, Param, Res } from '@nestjs/common';
import type { FastifyReply } from 'fastify';
import { displayedSpanType, parseTraceId, spansShowGenAi } from '@spanforge/query';
import { ApiKeyScope, type ProjectScope } from '@spanforge/tenancy';
import { CurrentProject, RequireScope } from '../auth/access.decorators';
import { notFound } from '@spanforge/errors';
import { ProjectReads } from '../graphql/request-context';
import { renderWaterfall, type WaterfallSpan } from './waterfall.svg';

/** Response header: `true` when the trace has more spans than the picture shows (its first ones in start order). */
export const SPANS_TRUNCATED_HEADER = 'x-spanforge-spans-truncated';

/** `GET /v1/traces/:traceId/waterfall.svg` with the project key: the trace as a picture. */
@Controller('v1/traces')
export class WaterfallController {
  constructor(private readonly data: ProjectReads) {}

  @RequireScope(ApiKeyScope.READ)
  @Get(':traceId/waterfall.svg')
  async waterfall(@Param('traceId') traceId: string, @CurrentProject() scope: ProjectScope, @Res() reply: FastifyReply): Promise<void> {
    const id = parseTraceId(traceId);
    const reads = this.data.traceService.reads(this.data.forScope(scope));
    // The spans are read (capped, as `trace { spans }` reads them) while the trace is looked up.
    const [bounds, read] = await Promise.all([reads.bounds(id), reads.spans(id)]);
    if (!bounds) throw notFound('no such trace in this project');
    const { criticalPath } = await reads.analysis({ traceId: id });
    const genAi = spansShowGenAi(read.records);
    const origin = read.records.reduce(
      (min, r) => (BigInt(r.start_ns) < min ? BigInt(r.start_ns) : min),
      BigInt(read.records[0]?.start_ns ?? '0'),
    );
    const spans: WaterfallSpan[] = read.records.map((r) => ({
      spanId: r.span_id,
      parentSpanId: r.parent_span_id || null,
      name: r.name,
      type: displayedSpanType(r, genAi) as WaterfallSpan['type'],
      startMs: Number(BigInt(r.start_ns) - origin) / 1e6,
      endMs: Number(BigInt(r.end_ns) - origin) / 1e6,
      status: r.status_code,
    }));
    // A trace larger than one read is drawn from its first spans, and the picture's title says so.
    const title = read.truncated ? `${id} (first ${this.data.traceService.maxSpansPerRead.toLocaleString('en-US')} spans only)` : id;
    const svg = renderWaterfall({ traceId: title, spans, criticalPath: criticalPath.map((s) => s.spanId) });
    await reply
      .status(200)
      .header('content-type', 'image/svg+xml; charset=utf-8')
      .header('cache-control', 'private, max-age=60')
      .header(SPANS_TRUNCATED_HEADER, String(read.truncated))
      .send(svg);
  }
}
