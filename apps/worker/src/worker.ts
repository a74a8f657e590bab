import type { Infrastructure } from '@spanforge/runtime';

/**
 * Starts the queue consumers of this process. Each consumer registers its own drain step; the
 * queue backend closes workers before queues on shutdown.
 */
export async function startWorkers(infra: Infrastructure): Promise<string[]> {
  return [`Workers    consuming from ${infra.services.queue}`];
}
