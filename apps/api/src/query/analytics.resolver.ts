import { Args, Context, Info, Int, Query, Resolver } from '@nestjs/graphql';
import type { GraphQLResolveInfo } from 'graphql';
import { AnalyticsRepository, decodeCursor, encodeCursor, isoOf, pageSize, sessionScores, usd } from '@spanforge/query';
import { ApiKeyScope } from '@spanforge/tenancy';
import { RequireScope } from '../auth/access.decorators';
import { ProjectReads, type RequestContext } from '../graphql/request-context';
import { CostDimension, CostRow, IterationLatency, SessionConnection, SessionFilterInput, TraceFilterInput } from './query.model';
import { selectedFields } from './selection';

/** The project aggregates (latency by iterations, sessions, cost breakdown; docs/api.md), served from the rollups. */
@RequireScope(ApiKeyScope.READ)
@Resolver()
export class AnalyticsResolver {
  constructor(private readonly reads: ProjectReads) {}

  private repository(context: RequestContext): AnalyticsRepository {
    return new AnalyticsRepository(this.reads.of(context));
  }

  @Query(() => [IterationLatency], { description: 'Trace latency percentiles (exact, inclusive) per agent iteration count, fewest first.' })
  async latencyByIterations(
    @Context() context: RequestContext,
    @Args('filter', { type: () => TraceFilterInput, nullable: true, description: 'The traces covered; absent: all.' })
    filter?: TraceFilterInput,
  ): Promise<IterationLatency[]> {
    const rows = await this.repository(context).latencyByIterations(filter);
    return rows.map((r) => ({
      iterations: Number(r.iterations),
      traceCount: Number(r.trace_count),
      p50Ms: Number(r.p50_ms),
      p95Ms: Number(r.p95_ms),
      p99Ms: Number(r.p99_ms),
      avgCostUsd: usd(r.avg_cost_usd),
    }));
  }

  @Query(() => SessionConnection, { description: 'Sessions, most expensive first.' })
  async sessions(
    @Context() context: RequestContext,
    @Args('filter', { type: () => SessionFilterInput, nullable: true, description: 'The sessions covered; absent: all.' })
    filter?: SessionFilterInput,
    @Args('first', { type: () => Int, nullable: true, description: 'Page size, 1 to 200; absent: 20.' }) first?: number,
    @Args('after', { type: () => String, nullable: true, description: 'pageInfo.endCursor of the previous page; absent: the first page.' })
    after?: string,
    @Info() info?: GraphQLResolveInfo,
  ): Promise<SessionConnection> {
    const size = pageSize(first);
    const cursor = decodeCursor(after, ['number', 'string']) as [number, string] | undefined;
    // The total is a second read of every matching session: made only when asked for.
    const counted = !info || selectedFields(info).has('totalCount');
    const { rows, total } = await this.repository(context).sessions(filter, size, cursor, counted);
    const page = rows.slice(0, size);
    const last = page[page.length - 1];
    return {
      nodes: page.map((r) => ({
        sessionId: r.session_id,
        traceCount: Number(r.trace_count),
        costUsd: usd(r.cost_usd),
        inputTokens: Number(r.input_tokens),
        outputTokens: Number(r.output_tokens),
        firstSeen: isoOf(r.first_seen),
        lastSeen: isoOf(r.last_seen),
        feedback: sessionScores(r),
      })),
      // Not asked for (not counted): never sent.
      totalCount: total ?? 0,
      pageInfo: { hasNextPage: rows.length > size, endCursor: last ? encodeCursor([Number(last.cost_usd), last.session_id]) : null },
    };
  }

  @Query(() => [CostRow], {
    description: 'Cost and tokens grouped by the chosen dimensions, most expensive first, at most 10,000 rows.',
  })
  async costBreakdown(
    @Context() context: RequestContext,
    @Args('groupBy', { type: () => [CostDimension], description: '1 to 6 distinct dimensions; each row has its keys in this order.' })
    groupBy: CostDimension[],
    @Args('filter', { type: () => TraceFilterInput, nullable: true, description: 'The traces covered; absent: all.' })
    filter?: TraceFilterInput,
  ): Promise<CostRow[]> {
    const rows = await this.repository(context).costBreakdown(groupBy, filter);
    return rows.map((r) => ({
      keys: r.keys,
      costUsd: usd(r.cost_usd),
      inputTokens: Number(r.input_tokens),
      outputTokens: Number(r.output_tokens),
      spanCount: Number(r.span_count),
    }));
  }
}
