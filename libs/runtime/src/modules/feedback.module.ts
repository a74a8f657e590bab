import { Module } from '@nestjs/common';
import { Counter } from 'prom-client';
import type { ClickHouseClient } from '@spanforge/clickhouse';
import { FeedbackRepository, FeedbackService } from '@spanforge/feedback';
import { ProjectPolicies } from '@spanforge/tenancy';
import type { ProcessContext } from '../process';
import { ClickHouseModule } from './clickhouse.module';
import { Postgres, PostgresModule } from './postgres.module';
import { TenancyModule } from './tenancy.module';
import { CLICKHOUSE, PROCESS } from './tokens';

function openFeedback(
  context: ProcessContext,
  clickhouse: ClickHouseClient,
  postgres: Postgres,
  policies: ProjectPolicies,
): FeedbackService {
  const unknownTrace = new Counter({
    name: 'spanforge_feedback_unknown_trace_total',
    help: 'Scores accepted for a trace not stored at the time (kept; they join the trace when it lands)',
    registers: [context.metrics],
  });
  const log = context.log.child('feedback');
  const feedback = new FeedbackService(
    new FeedbackRepository(clickhouse, postgres.pool, async (projectId) => (await policies.policyFor(projectId)).policy.retentionDays ?? 0),
    context.secrets.keyPepper,
    () => unknownTrace.inc(),
    (message) => log.warn(message),
  );
  context.shutdown.add('flush', 'feedback writer', () => feedback.close());
  return feedback;
}

/** Scores (ClickHouse), score configs (PostgreSQL) and feedback tokens. */
@Module({
  imports: [ClickHouseModule, PostgresModule, TenancyModule],
  providers: [{ provide: FeedbackService, inject: [PROCESS, CLICKHOUSE, Postgres, ProjectPolicies], useFactory: openFeedback }],
  exports: [FeedbackService],
})
export class FeedbackModule {}
