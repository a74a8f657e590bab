import { Registry, collectDefaultMetrics } from 'prom-client';

/** One registry per process, served at `GET /metrics` on the API port. */
export function createMetricsRegistry(): Registry {
  const registry = new Registry();
  collectDefaultMetrics({ register: registry, prefix: 'spanforge_' });
  return registry;
}
