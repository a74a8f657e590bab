import type { Pool } from 'pg';
import type { Registry } from 'prom-client';
import type { AppConfig } from '@spanforge/config';
import type { ClickHouseClient } from '@spanforge/clickhouse';
import { CostReportService } from '@spanforge/cost-reports';
import type { QueueBackend } from '@spanforge/queue';
import { ApiModule, createApiApplication, listenApi } from '@spanforge/api-app';
import { Gateway, GatewayModule } from '@spanforge/gateway-app';
import { WorkerModule, Workers } from '@spanforge/worker-app';
import { CLICKHOUSE, CONFIG, Logger, Postgres, QUEUES, ShutdownSequence, prepareProcess, roleRoot } from '@spanforge/runtime';
import { TenancyService } from '@spanforge/tenancy';
import { testConfig } from '../support';

/** The services of a started harness, taken from its Nest container, for tests to set up and look at data. */
export interface HarnessServices {
  config: AppConfig;
  log: Logger;
  shutdown: ShutdownSequence;
  clickhouse: ClickHouseClient;
  tenancy: TenancyService;
  costReports: CostReportService;
  queues: QueueBackend;
  metrics: Registry;
  pg: Pool;
  adminToken: string | undefined;
}

export interface IngestHarness {
  services: HarnessServices;
  /** http://127.0.0.1:port of OTLP/HTTP (POST /v1/traces). */
  http: string;
  /** 127.0.0.1:port of OTLP/gRPC. */
  grpc: string;
  /** http://localhost:port of the API (GraphQL at /graphql). */
  api: string;
  newProject(name?: string): Promise<{ tenantId: string; projectId: string; apiKey: string; apiKeyId: string }>;
  /** Rows of a ClickHouse query, values bound as parameters. */
  query<T>(sql: string, params?: Record<string, unknown>): Promise<T[]>;
  /** Waits until `count` distinct spans of the project are stored (or throws after `timeoutMs`). */
  waitForSpans(projectId: string, count: number, timeoutMs?: number): Promise<number>;
  stop(): Promise<void>;
}

/**
 * The all-in-one in this test process (gateway, worker and api as one Nest application, as `npm
 * start` runs them), on the test PostgreSQL, this jest worker's chDB and BullMQ (PostgreSQL
 * backend, or Redis when `REDIS_URL` is given): the real components.
 */
export async function startIngestHarness(
  overrides: Record<string, string> = {},
  options: { beforeWorkers?: (services: HarnessServices) => void; workers?: boolean } = {},
): Promise<IngestHarness> {
  const context = await prepareProcess(testConfig(overrides), 'all-in-one');
  try {
    const app = await createApiApplication(context, roleRoot(context, [WorkerModule, GatewayModule, ApiModule.forRoot()]));
    const services: HarnessServices = {
      config: app.get(CONFIG),
      log: app.get(Logger),
      shutdown: app.get(ShutdownSequence),
      clickhouse: app.get(CLICKHOUSE),
      tenancy: app.get(TenancyService),
      costReports: app.get(CostReportService),
      queues: app.get(QUEUES),
      metrics: context.metrics,
      pg: app.get(Postgres).pool,
      adminToken: context.secrets.adminToken,
    };
    // A seam for fault injection (e.g. a ClickHouse that refuses some inserts), set before the worker takes the client.
    options.beforeWorkers?.(services);
    // Without workers the queue only grows: for tests of what the gateway does with a deep backlog.
    if (options.workers !== false) await app.get(Workers).start();
    const [httpLine, grpcLine] = await app.get(Gateway).start();
    const api = await listenApi(context, app);
    const http = /http:\/\/localhost:(\d+)/.exec(httpLine!)![1]!;
    const grpc = /localhost:(\d+)/.exec(grpcLine!)![1]!;
    const query = async <T>(sql: string, params: Record<string, unknown> = {}) =>
      (await services.clickhouse.query({ query: sql, query_params: params, format: 'JSONEachRow' })).json<T>();
    return {
      services,
      http: `http://127.0.0.1:${http}`,
      grpc: `127.0.0.1:${grpc}`,
      api: api.url,
      async newProject(name = `project-${Math.random().toString(36).slice(2, 8)}`) {
        const { tenant, project } = await services.tenancy.createTenant(name);
        const { secret, apiKey } = await services.tenancy.createApiKey(project.id, 'test');
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
      stop: () => context.shutdown.run(),
    };
  } catch (error) {
    await context.shutdown.run();
    throw error;
  }
}
