import { Args, Context, Query, Resolver } from '@nestjs/graphql';
import { MetricsRepository, type MetricsQuery } from '@spanforge/query';
import { ApiKeyScope } from '@spanforge/tenancy';
import { RequireScope } from '../auth/access.decorators';
import { ProjectReads, type RequestContext } from '../graphql/request-context';
import { MetricsQueryInput, MetricsResult, type Granularity } from './metrics.model';

/** Time series for dashboards (libs/query metrics.repository.ts). */
@RequireScope(ApiKeyScope.READ)
@Resolver()
export class MetricsResolver {
  constructor(private readonly reads: ProjectReads) {}

  @Query(() => MetricsResult, {
    description:
      'Measures over spans, traces or feedback scores in time buckets of a time zone, split into the top series by the first measure. Every bucket has a point.',
  })
  async metrics(
    @Context() context: RequestContext,
    @Args('query', { type: () => MetricsQueryInput, description: 'What to measure, over which rows, split how, in which buckets.' })
    query: MetricsQueryInput,
  ): Promise<MetricsResult> {
    const repository = new MetricsRepository(this.reads.of(context));
    const answer = await repository.metrics(query as MetricsQuery);
    return {
      granularity: answer.granularity as Granularity | null,
      series: answer.series.map((series) => ({
        keys: series.keys,
        points: series.points.map((point) => ({ time: point.time === null ? null : new Date(point.time), values: point.values })),
      })),
    };
  }
}
