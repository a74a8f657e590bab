import { startGateway } from '@spanforge/gateway-app';
import { startWorkers } from '@spanforge/worker-app';
import { startInfrastructure, type Infrastructure } from '@spanforge/runtime';
import { testConfig } from '../support';

export interface IngestHarness {
  infra: Infrastructure;
  /** http://127.0.0.1:port of OTLP/HTTP (POST /v1/traces). */
  http: string;
  /** 127.0.0.1:port of OTLP/gRPC. */
  grpc: string;
  newProject(name?: string): Promise<{ tenantId: string; projectId: string; apiKey: string; apiKeyId: string }>;
  /** Rows of a ClickHouse query, values bound as parameters. */
  query<T>(sql: string, params?: Record<string, unknown>): Promise<T[]>;
  /** Waits until `count` distinct spans of the project are stored (or throws after `timeoutMs`). */
  waitForSpans(projectId: string, count: number, timeoutMs?: number): Promise<number>;
  stop(): Promise<void>;
}

/**
 * Gateway and worker in this test process, on the test PostgreSQL, this jest worker's chDB and
 * BullMQ (PostgreSQL backend, or Redis when `redisUrl` is given): the real components, started
 * the way the all-in-one starts them.
 */
export async function startIngestHarness(
  overrides: Record<string, string> = {},
  options: { beforeWorkers?: (infra: Infrastructure) => void; workers?: boolean } = {},
): Promise<IngestHarness> {
  const infra = await startInfrastructure(testConfig(overrides), 'all-in-one');
  // A seam for fault injection (e.g. a ClickHouse that refuses some inserts), set before the worker takes the client.
  options.beforeWorkers?.(infra);
  // Without workers the queue only grows: for tests of what the gateway does with a deep backlog.
  if (options.workers !== false) await startWorkers(infra);
  const [httpLine, grpcLine] = await startGateway(infra);
  const http = /http:\/\/localhost:(\d+)/.exec(httpLine!)![1]!;
  const grpc = /localhost:(\d+)/.exec(grpcLine!)![1]!;
  const query = async <T>(sql: string, params: Record<string, unknown> = {}) =>
    (await infra.clickhouse.query({ query: sql, query_params: params, format: 'JSONEachRow' })).json<T>();
  return {
    infra,
    http: `http://127.0.0.1:${http}`,
    grpc: `127.0.0.1:${grpc}`,
    async newProject(name = `project-${Math.random().toString(36).slice(2, 8)}`) {
      const { tenant, project } = await infra.tenancy.createTenant(name);
      const { secret, apiKey } = await infra.tenancy.createApiKey(project.id, 'test');
      return { tenantId: tenant.id, projectId: project.id, apiKey: secret, apiKeyId: apiKey.id };
    },
    query,
    async waitForSpans(projectId, count, timeoutMs = 30_000) {
      const deadline = Date.now() + timeoutMs;
      let stored = 0;
      while (Date.now() < deadline) {
        const [row] = await query<{ n: string }>('SELECT count() AS n FROM spans FINAL WHERE project_id = {projectId:String}', {
          projectId,
        });
        stored = Number(row?.n ?? 0);
        if (stored >= count) return stored;
        await new Promise((r) => setTimeout(r, 100));
      }
      throw new Error(`only ${stored} of ${count} spans stored after ${timeoutMs} ms`);
    },
    stop: () => infra.shutdown.run(),
  };
}
