import { Inject } from '@nestjs/common';
import { Args, Field, ID, Int, Mutation, ObjectType, Query, Resolver } from '@nestjs/graphql';
import { badInput, notFound } from '@spanforge/errors';
import { DeadLetterRepository } from '@spanforge/ingest';
import type { ClickHouseClient } from '@spanforge/clickhouse';
import {
  INGEST_JOB_OPTIONS,
  INGEST_QUEUE,
  IngestJobName,
  type IngestJob,
  type QueueBackend,
  type ReplayDeadLettersJob,
} from '@spanforge/queue';
import { CLICKHOUSE, QUEUES } from '@spanforge/runtime';
import { TenancyService } from '@spanforge/tenancy';
import { AdminOnly } from '../auth/access.decorators';

@ObjectType('DeadLetter', {
  description:
    'Something the ingest pipeline could not store, kept instead of dropped: a span row ClickHouse refused, or an export whose retries ran out. Replay it with replayDeadLetters once the cause is fixed.',
})
export class DeadLetterModel {
  @Field(() => ID, { description: 'The dead letter id: what replayDeadLetters takes.' }) id!: string;
  @Field(() => ID, { description: 'The project whose data it holds.' }) projectId!: string;
  @Field({
    description:
      'span_row (one span as the worker built it), export_job (a whole export as received) or accounting_job (the gateway counters).',
  })
  kind!: string;
  @Field({ description: 'store_refused, retries_exhausted, stalled or poison_export.' }) reason!: string;
  @Field({ description: 'What the store or the worker said.' }) error!: string;
  @Field({ description: "The export's id ('' for rows the worker wrote again itself)." }) exportId!: string;
  @Field(() => Int, { description: 'Spans it holds.' }) spans!: number;
  @Field(() => Date, { description: 'When it was kept.' }) deadLetteredAt!: Date;
  @Field(() => Date, { nullable: true, description: 'When a replay wrote it again; null while it was not replayed.' })
  replayedAt!: Date | null;
}

@ObjectType('DeadLetterReplay', { description: 'A replay of dead letters, handed to the worker.' })
export class DeadLetterReplayModel {
  @Field(() => Int, {
    description: 'Dead letters the replay will write again (the worker does it shortly; they show replayedAt when done).',
  })
  pending!: number;
}

/** Most dead letters listed or replayed by one call. */
const MAX_DEAD_LETTERS = 10_000;

/** Operators' view of what ingest could not store, and the replay after a fix (admin token). */
@AdminOnly()
@Resolver()
export class DeadLettersResolver {
  private readonly letters: DeadLetterRepository;

  constructor(
    @Inject(CLICKHOUSE) clickhouse: ClickHouseClient,
    @Inject(QUEUES) private readonly queues: QueueBackend,
    private readonly tenancy: TenancyService,
  ) {
    this.letters = new DeadLetterRepository(clickhouse);
  }

  @Query(() => [DeadLetterModel], { description: "A project's dead letters, newest first (admin token)." })
  async deadLetters(
    @Args('projectId', { type: () => ID, description: 'The project.' }) projectId: string,
    @Args('first', { type: () => Int, defaultValue: 100, description: 'How many to list, 1 to 10,000.' }) first: number,
    @Args('includeReplayed', { defaultValue: false, description: 'Also list those already replayed.' }) includeReplayed: boolean,
  ): Promise<DeadLetterModel[]> {
    if (first < 1 || first > MAX_DEAD_LETTERS) throw badInput(`first must be from 1 to ${MAX_DEAD_LETTERS}`);
    const project = await this.project(projectId);
    const letters = await this.letters.list(project, { first, includeReplayed });
    return letters.map((letter) => ({
      ...letter,
      deadLetteredAt: new Date(letter.deadLetteredAt),
      replayedAt: letter.replayedAt === null ? null : new Date(letter.replayedAt),
    }));
  }

  @Mutation(() => DeadLetterReplayModel, {
    description: "Writes a project's dead letters again through the ingest pipeline (all not yet replayed, or the given ids); admin token.",
  })
  async replayDeadLetters(
    @Args('projectId', { type: () => ID, description: 'The project.' }) projectId: string,
    @Args('ids', {
      type: () => [ID],
      nullable: true,
      description: 'The dead letters to replay, 1 to 10,000; absent: all not yet replayed.',
    })
    ids: string[] | undefined,
  ): Promise<DeadLetterReplayModel> {
    if (ids && (ids.length === 0 || ids.length > MAX_DEAD_LETTERS))
      throw badInput(`ids must name from 1 to ${MAX_DEAD_LETTERS} dead letters, or be left out for all`);
    const project = await this.project(projectId);
    const pending = await this.letters.pending(project, ids ?? undefined, MAX_DEAD_LETTERS);
    if (pending.length === 0) return { pending: 0 };
    const job: ReplayDeadLettersJob = { v: 1, ...project, ids: pending.map((letter) => letter.id) };
    await this.queues.queue<IngestJob>(INGEST_QUEUE).add(IngestJobName.ReplayDeadLetters, job, INGEST_JOB_OPTIONS);
    return { pending: pending.length };
  }

  private async project(projectId: string): Promise<{ tenantId: string; projectId: string }> {
    const project = await this.tenancy.findProject(projectId);
    if (!project) throw notFound(`no project ${projectId}`);
    return { tenantId: project.tenantId, projectId: project.id };
  }
}
