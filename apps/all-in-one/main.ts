import 'reflect-metadata';
import { runRole } from '@spanforge/runtime';
import { startApiServer } from '@spanforge/api-app';
import { startGateway } from '@spanforge/gateway-app';
import { startWorkers } from '@spanforge/worker-app';

/**
 * `npm start`: gateway, workers and api in one process, on embedded PostgreSQL and chDB unless
 * DATABASE_URL / CLICKHOUSE_URL are set. chDB binds one data directory per process, which is why
 * the embedded mode is all-in-one.
 */
runRole('all-in-one', async (infra) => {
  const workers = await startWorkers(infra);
  const gateway = await startGateway(infra);
  const api = await startApiServer(infra);
  return [
    ...gateway,
    `GraphQL    ${api.url}/graphql`,
    `Explorer   ${api.url}/graphiql`,
    `Health     ${api.url}/readyz   metrics ${api.url}/metrics`,
    ...workers,
  ];
});
