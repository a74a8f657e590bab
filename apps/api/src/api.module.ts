import { Module, type DynamicModule } from '@nestjs/common';
import { APP_FILTER, APP_GUARD } from '@nestjs/core';
import { TraceService } from '@spanforge/query';
import {
  ClickHouseModule,
  CostReportsModule,
  FeedbackModule,
  Logger,
  PostgresModule,
  QueueModule,
  TenancyModule,
} from '@spanforge/runtime';
import { AccessGuard } from './auth/access.guard';
import { DeadLettersResolver } from './admin/dead-letters.resolver';
import { TenancyResolver } from './admin/tenancy.resolver';
import { graphqlModule, type GraphqlDriver } from './graphql/graphql.drivers';
import { ProjectReads } from './graphql/request-context';
import { ApiExceptionFilter } from './api-exception.filter';
import { HealthController } from './health/health.controller';
import { ExplorerController } from './explorer/explorer.controller';
import { AnalyticsResolver } from './query/analytics.resolver';
import { StatsResolver } from './query/stats.resolver';
import { WaterfallController } from './waterfall/waterfall.controller';
import { FeedbackController } from './feedback/feedback.controller';
import { FeedbackResolver } from './feedback/feedback.resolver';
import { CostReportController } from './reports/cost-report.controller';
import { CostReportResolver } from './reports/cost-report.resolver';
import { TraceResolver } from './query/trace.resolver';
import { MetricsResolver } from './metrics/metrics.resolver';
import { DataPolicyResolver } from './policy/data-policy.resolver';
import { ErasureResolver } from './policy/erasure.resolver';
import { UsageResolver } from './usage/usage.resolver';

/**
 * The api role: GraphQL and REST over the services it reads (tenancy, ClickHouse, feedback, cost
 * reports, the ingest queue for dead-letter replays). Every resolver and controller gets them
 * through its constructor; what belongs to one request lives on its GraphQL context (ProjectReads).
 */
@Module({})
export class ApiModule {
  static forRoot(driver: GraphqlDriver = 'mercurius'): DynamicModule {
    return {
      module: ApiModule,
      imports: [graphqlModule(driver), TenancyModule, PostgresModule, ClickHouseModule, QueueModule, FeedbackModule, CostReportsModule],
      controllers: [HealthController, WaterfallController, FeedbackController, CostReportController, ExplorerController],
      providers: [
        { provide: APP_FILTER, inject: [Logger], useFactory: (log: Logger) => new ApiExceptionFilter(log) },
        { provide: APP_GUARD, useClass: AccessGuard },
        // The trace rules and limits (libs/query): stateless, one for every request.
        { provide: TraceService, useFactory: () => new TraceService() },
        ProjectReads,
        TenancyResolver,
        DeadLettersResolver,
        TraceResolver,
        AnalyticsResolver,
        StatsResolver,
        MetricsResolver,
        FeedbackResolver,
        CostReportResolver,
        DataPolicyResolver,
        ErasureResolver,
        UsageResolver,
      ],
    };
  }
}
