import { Module, type DynamicModule } from '@nestjs/common';
import { APP_FILTER, APP_GUARD } from '@nestjs/core';
import { AccessGuard } from './auth/access.guard';
import type { Infrastructure } from '@spanforge/runtime';
import { DeadLettersResolver } from './admin/dead-letters.resolver';
import { TenancyResolver } from './admin/tenancy.resolver';
import { graphqlModule, type GraphqlDriver } from './graphql/graphql.drivers';
import { ApiExceptionFilter } from './api-exception.filter';
import { HealthController } from './health/health.controller';
import { ExplorerController } from './explorer/explorer.controller';
import { INFRASTRUCTURE } from './infrastructure.token';
import { AnalyticsResolver } from './query/analytics.resolver';
import { StatsResolver } from './query/stats.resolver';
import { WaterfallController } from './waterfall/waterfall.controller';
import { FeedbackController } from './feedback/feedback.controller';
import { FeedbackResolver } from './feedback/feedback.resolver';
import { CostReportController } from './reports/cost-report.controller';
import { CostReportResolver } from './reports/cost-report.resolver';
import { TraceResolver } from './query/trace.resolver';
import { MetricsResolver } from './metrics/metrics.resolver';

@Module({})
export class ApiModule {
  /** The api is built around an already opened Infrastructure, so tests and the all-in-one share one. */
  static forRoot(infra: Infrastructure, driver: GraphqlDriver = 'mercurius'): DynamicModule {
    return {
      module: ApiModule,
      imports: [graphqlModule(infra, driver)],
      controllers: [HealthController, WaterfallController, FeedbackController, CostReportController, ExplorerController],
      providers: [
        { provide: INFRASTRUCTURE, useValue: infra },
        { provide: APP_FILTER, useFactory: () => new ApiExceptionFilter(infra.log) },
        { provide: APP_GUARD, useClass: AccessGuard },
        TenancyResolver,
        DeadLettersResolver,
        TraceResolver,
        AnalyticsResolver,
        StatsResolver,
        MetricsResolver,
        FeedbackResolver,
        CostReportResolver,
      ],
    };
  }
}
