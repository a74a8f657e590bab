import { Args, Context, Query, Resolver } from '@nestjs/graphql';
import { StatsRepository, isoOf, usd } from '@spanforge/query';
import { ApiKeyScope } from '@spanforge/tenancy';
import { RequireScope } from '../auth/access.decorators';
import { ProjectReads, type RequestContext } from '../graphql/request-context';
import { IngestMinute, ModelStats, SpanType, SpanTypeStats, TimeRangeInput, TraceFilterInput } from './query.model';

const nullable = (value: number | null | undefined) => (value === null || value === undefined ? null : Number(value));

/** The span statistics' filter: a range for the spans, the rest for their traces. */
const SPAN_FILTER_ARG = {
  type: () => TraceFilterInput,
  nullable: true,
  description: 'from/to: the spans that start in the range; the rest: of the traces it matches. Absent: all.',
};

/** Per span type, per model and per minute of ingest. */
@RequireScope(ApiKeyScope.READ)
@Resolver()
export class StatsResolver {
  constructor(private readonly reads: ProjectReads) {}

  private repository(context: RequestContext): StatsRepository {
    return new StatsRepository(this.reads.of(context));
  }

  @Query(() => [SpanTypeStats], {
    description:
      'Per span type: count, error rate, latency percentiles; of the spans that start in the range, of the traces the filter matches.',
  })
  async spanTypeStats(
    @Context() context: RequestContext,
    @Args('filter', SPAN_FILTER_ARG)
    filter?: TraceFilterInput,
  ): Promise<SpanTypeStats[]> {
    const rows = await this.repository(context).spanTypeStats(filter);
    return rows.map((r) => ({
      type: r.span_type as SpanType,
      spanCount: Number(r.span_count),
      errorRate: Number(r.error_rate),
      p50Ms: Number(r.p50_ms),
      p95Ms: Number(r.p95_ms),
      p99Ms: Number(r.p99_ms),
    }));
  }

  @Query(() => [ModelStats], {
    description:
      'Per model: calls, tokens, cost, TTFT p50/p95, output tokens/s; of the LLM calls that start in the range, of the traces the filter matches.',
  })
  async modelStats(
    @Context() context: RequestContext,
    @Args('filter', SPAN_FILTER_ARG)
    filter?: TraceFilterInput,
  ): Promise<ModelStats[]> {
    const rows = await this.repository(context).modelStats(filter);
    return rows.map((r) => ({
      model: r.model,
      provider: r.provider || null,
      calls: Number(r.calls),
      inputTokens: Number(r.input_tokens),
      outputTokens: Number(r.output_tokens),
      costUsd: usd(r.cost_usd),
      unpricedCalls: Number(r.unpriced_calls),
      ttftP50Ms: nullable(r.ttft_p50_ms),
      ttftP95Ms: nullable(r.ttft_p95_ms),
      outputTokensPerSecond: nullable(r.output_tokens_per_second),
    }));
  }

  @Query(() => [IngestMinute], {
    description:
      'What happened to exported spans, per minute: received, accepted, rejected (by reason), rate-limited, refused, dead-lettered (by reason).',
  })
  async ingestStats(
    @Context() context: RequestContext,
    @Args('filter', { type: () => TimeRangeInput, nullable: true, description: 'The minutes covered; absent: all.' })
    filter?: TimeRangeInput,
  ): Promise<IngestMinute[]> {
    const rows = await this.repository(context).ingestMinutes(filter);
    const minutes = new Map<string, IngestMinute>();
    for (const row of rows) {
      let minute = minutes.get(row.minute);
      if (!minute)
        minutes.set(
          row.minute,
          (minute = {
            minute: isoOf(`${row.minute}.000`),
            received: 0,
            accepted: 0,
            rejected: 0,
            rateLimited: 0,
            refused: 0,
            rejectedByReason: [],
            deadLettered: 0,
            deadLetteredByReason: [],
          }),
        );
      const spans = Number(row.spans);
      if (row.outcome === 'received') minute.received += spans;
      else if (row.outcome === 'accepted') minute.accepted += spans;
      else if (row.outcome === 'rate_limited') minute.rateLimited += spans;
      else if (row.outcome === 'refused') minute.refused += spans;
      else if (row.outcome === 'rejected') {
        minute.rejected += spans;
        minute.rejectedByReason.push({ reason: row.reason, spans });
      } else if (row.outcome === 'dead_lettered') {
        minute.deadLettered += spans;
        minute.deadLetteredByReason.push({ reason: row.reason, spans });
      }
    }
    return [...minutes.values()];
  }
}
