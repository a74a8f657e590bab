import { Inject } from '@nestjs/common';
import { Args, Context, Field, ID, InputType, Int, Mutation, ObjectType, Query, Resolver, registerEnumType } from '@nestjs/graphql';
import type { ClickHouseClient } from '@spanforge/clickhouse';
import { DomainError, ErrorCode } from '@spanforge/errors';
import { ErasureInterruptedError, ErasureRepository, MAX_ERASED_TRACE_IDS, type ErasureJob, type ErasureStatus } from '@spanforge/ingest';
import { CLICKHOUSE, Logger, Postgres } from '@spanforge/runtime';
import { ApiKeyScope, TenancyService } from '@spanforge/tenancy';
import { AdminOrScope } from '../auth/access.decorators';
import type { RequestContext } from '../graphql/request-context';
import { namedProject } from './project-access';

enum ErasureStatusEnum {
  PENDING = 'PENDING',
  RUNNING = 'RUNNING',
  COMPLETED = 'COMPLETED',
}
registerEnumType(ErasureStatusEnum, {
  name: 'ErasureStatus',
  description: 'How far an erasure is; from the request on, no answer returns the data.',
  valuesMap: {
    PENDING: { description: 'Asked for: no answer returns the data; storage still holds it until a worker runs the job.' },
    RUNNING: { description: 'A worker is removing the data from storage.' },
    COMPLETED: { description: 'No table holds the data any more.' },
  },
});

@InputType('EraseDataInput', { description: 'What to erase: a user’s traces, a session’s, and/or traces by id (at least one).' })
class EraseDataInput {
  @Field(() => ID, { description: 'The project.' }) projectId!: string;
  @Field(() => String, { nullable: true, description: 'Every trace of this user (and their sessions).' }) userId?: string | null;
  @Field(() => String, { nullable: true, description: 'Every trace of this session.' }) sessionId?: string | null;
  @Field(() => [String], { nullable: true, description: `These traces (at most ${MAX_ERASED_TRACE_IDS}).` }) traceIds?: string[] | null;
}

@ObjectType('ErasureJob', {
  description: 'One erasure: from its answer on no query returns the data; storage holds none of it once COMPLETED.',
})
class ErasureJobModel {
  @Field(() => ID, { description: 'The job.' }) id!: string;
  @Field(() => ErasureStatusEnum, { description: 'How far it is.' }) status!: ErasureStatus;
  @Field(() => Date, { description: 'When it was asked for.' }) requestedAt!: Date;
  @Field(() => Date, { nullable: true, description: 'When storage held none of it; null until then.' }) completedAt!: Date | null;
  @Field(() => Int, { description: 'The traces it erases, as found when it was asked for.' }) traceCount!: number;
}

function toModel(job: ErasureJob): ErasureJobModel {
  return { id: job.id, status: job.status, requestedAt: job.requestedAt, completedAt: job.completedAt, traceCount: job.traceCount };
}

/** `eraseData` and `erasureJob`: the admin token for any project, a MANAGE key for its own (docs/data-policy.md, "Erasure"). */
@AdminOrScope(ApiKeyScope.MANAGE)
@Resolver()
export class ErasureResolver {
  private readonly erasures: ErasureRepository;

  constructor(
    @Inject(CLICKHOUSE) clickhouse: ClickHouseClient,
    postgres: Postgres,
    private readonly tenancy: TenancyService,
    private readonly log: Logger,
  ) {
    this.erasures = new ErasureRepository(clickhouse, postgres.pool);
  }

  @Mutation(() => ErasureJobModel, {
    description:
      "Erases a user's, a session's or some traces' data: from this answer on no query or aggregate returns it, and a worker then removes it from every table (erasureJob shows how far).",
  })
  async eraseData(
    @Args('input', { type: () => EraseDataInput, description: 'What to erase.' }) input: EraseDataInput,
    @Context() context: RequestContext,
  ): Promise<ErasureJobModel> {
    const project = await namedProject(context, input.projectId, this.tenancy, "erase only its own project's data");
    const requestedBy = context.project ? `key:${context.project.apiKeyId}` : 'admin';
    try {
      return toModel(await this.erasures.request(project, input, requestedBy));
    } catch (error) {
      if (!(error instanceof ErasureInterruptedError)) throw error;
      this.log.error(
        `project ${project.projectId}: erasure ${error.jobId}: the request failed; its job is left to the workers`,
        error.cause,
      );
      if (error.releaseFailure !== undefined)
        this.log.error(
          `project ${project.projectId}: erasure ${error.jobId} could not be given to the workers now; one claims it as abandoned within 10 minutes`,
          error.releaseFailure,
        );
      throw new DomainError(
        ErrorCode.UNAVAILABLE,
        `the erasure was recorded as job ${error.jobId}, but it could not be completed now: a worker finishes it (erasureJob(id: "${error.jobId}") shows how far); until it has, aggregates may still count the data`,
      );
    }
  }

  @Query(() => ErasureJobModel, { nullable: true, description: 'One erasure; null when there is no such job (for this key’s project).' })
  async erasureJob(
    @Args('id', { type: () => ID, description: 'The job.' }) id: string,
    @Context() context: RequestContext,
  ): Promise<ErasureJobModel | null> {
    const job = await this.erasures.job(id, context.project?.projectId);
    return job ? toModel(job) : null;
  }
}
