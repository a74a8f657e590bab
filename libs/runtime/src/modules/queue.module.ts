import { Module } from '@nestjs/common';
import { createQueueBackend, type QueueBackend } from '@spanforge/queue';
import type { ProcessContext } from '../process';
import { Postgres, PostgresModule } from './postgres.module';
import { PROCESS, QUEUES } from './tokens';

/** BullMQ on Redis when REDIS_URL is set, else on PostgreSQL; closed (workers drained) on shutdown. */
function openQueues(context: ProcessContext, postgres: Postgres): QueueBackend {
  const queues = createQueueBackend({ redisUrl: context.config.redisUrl, databaseUrl: postgres.url, log: context.log.child('queue') });
  context.shutdown.add('drain', 'queues and workers', () => queues.close());
  context.readiness.add('queue', () => queues.ping());
  context.services.queue = queues.describe();
  return queues;
}

@Module({
  imports: [PostgresModule],
  providers: [{ provide: QUEUES, inject: [PROCESS, Postgres], useFactory: openQueues }],
  exports: [QUEUES],
})
export class QueueModule {}
