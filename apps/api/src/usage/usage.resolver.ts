import { Args, Context, ID, Query, Resolver } from '@nestjs/graphql';
import { DomainError, ErrorCode, badInput, notFound } from '@spanforge/errors';
import { UsageRepository, usageRange, type UsageRange } from '@spanforge/query';
import { ApiKeyScope, TenancyService } from '@spanforge/tenancy';
import { AdminOrScope } from '../auth/access.decorators';
import { ProjectReads, type RequestContext } from '../graphql/request-context';
import { Granularity } from '../metrics/metrics.model';
import { UsageRowModel } from './usage.model';

/**
 * `usage`: a READ key reads its own project's; the admin token names a tenant and reads each of
 * its projects in turn, every read confined to its one project like any other (ScopedClickHouse):
 * there is no tenant-wide statement.
 */
@AdminOrScope(ApiKeyScope.READ)
@Resolver()
export class UsageResolver {
  constructor(
    private readonly reads: ProjectReads,
    private readonly tenancy: TenancyService,
  ) {}

  @Query(() => [UsageRowModel], {
    description:
      'Spans accepted, rejected and refused and bytes accepted, per project and bucket, of the minutes in [from, to); buckets without any export are left out. A READ key: its own project; the admin token: every project of `tenantId`.',
  })
  async usage(
    @Context() context: RequestContext,
    @Args('from', { description: 'Start of the range (inclusive; its minute counts whole).' }) from: Date,
    @Args('to', { description: 'End of the range (exclusive).' }) to: Date,
    @Args('granularity', {
      type: () => Granularity,
      nullable: true,
      description: 'Bucket size, in UTC (WEEK: from Monday); absent: one bucket for the whole range, e.g. a calendar month.',
    })
    granularity?: Granularity | null,
    @Args('tenantId', { type: () => ID, nullable: true, description: 'Admin token only (and required there): the tenant.' })
    tenantId?: string | null,
  ): Promise<UsageRowModel[]> {
    const range = usageRange(from, to, granularity ?? null);
    if (context.project) {
      if (tenantId && tenantId !== context.project.tenantId)
        throw new DomainError(ErrorCode.FORBIDDEN, 'this API key belongs to another tenant: it reads only its own project');
      return this.projectUsage(context.project, range);
    }
    if (!tenantId) throw badInput('tenantId is required with the admin token');
    if (!(await this.tenancy.findTenant(tenantId))) throw notFound(`no tenant with id ${tenantId}`);
    const projects = await this.tenancy.projectsOf(tenantId);
    const perProject = await Promise.all(projects.map((p) => this.projectUsage({ tenantId, projectId: p.id }, range)));
    return perProject.flat().sort((a, b) => a.time.getTime() - b.time.getTime() || a.projectId.localeCompare(b.projectId));
  }

  private async projectUsage(scope: { tenantId: string; projectId: string }, range: UsageRange): Promise<UsageRowModel[]> {
    const rows = await new UsageRepository(this.reads.forScope(scope)).usage(range);
    return rows.map((r) => ({
      // The whole range's one bucket starts at `from` itself (ClickHouse's DateTime would drop its milliseconds).
      time: range.granularity === 'WHOLE' ? new Date(range.fromMs) : new Date(Number(r.bucket_s) * 1000),
      projectId: scope.projectId,
      spansAccepted: Number(r.spans_accepted),
      spansRejected: Number(r.spans_rejected),
      spansRefused: Number(r.spans_refused),
      bytesAccepted: Number(r.bytes_accepted),
    }));
  }
}
