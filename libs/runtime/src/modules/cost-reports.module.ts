import { Module } from '@nestjs/common';
import type { Queue } from 'bullmq';
import { FairScheduler, type ClickHouseClient } from '@spanforge/clickhouse';
import { CostReportRepository, CostReportService } from '@spanforge/cost-reports';
import { COST_REPORTS_QUEUE, type DeliverJob, type FireJob, type QueueBackend } from '@spanforge/queue';
import { ProjectPolicies, TenancyRepository } from '@spanforge/tenancy';
import type { ProcessContext } from '../process';
import { ClickHouseModule } from './clickhouse.module';
import { Postgres, PostgresModule } from './postgres.module';
import { QueueModule } from './queue.module';
import { TenancyModule } from './tenancy.module';
import { CLICKHOUSE, PROCESS, QUEUES } from './tokens';

/** Cost report schedules (PostgreSQL), the reports they make (ClickHouse) and their queue. */
@Module({
  imports: [PostgresModule, ClickHouseModule, QueueModule, TenancyModule],
  providers: [
    {
      provide: CostReportService,
      inject: [PROCESS, Postgres, CLICKHOUSE, QUEUES, TenancyRepository, FairScheduler, ProjectPolicies],
      useFactory: (
        context: ProcessContext,
        postgres: Postgres,
        clickhouse: ClickHouseClient,
        queues: QueueBackend,
        tenancy: TenancyRepository,
        querySlots: FairScheduler,
        policies: ProjectPolicies,
      ) =>
        new CostReportService({
          repository: new CostReportRepository(postgres.pool),
          clickhouse,
          queue: queues.queue<FireJob | DeliverJob>(COST_REPORTS_QUEUE) as Queue<FireJob | DeliverJob>,
          projectName: async (projectId) => (await tenancy.findProject(projectId))?.name ?? projectId,
          allowPrivateWebhooks: context.config.allowPrivateWebhooks,
          queryLimits: context.config.queryLimits,
          querySlots,
          keptSince: (projectId) => policies.keptSince(projectId),
          warn: (message) => context.log.warn(message),
        }),
    },
  ],
  exports: [CostReportService],
})
export class CostReportsModule {}
