import 'reflect-metadata';
import { ensureDevelopmentProject, roleRoot, runRole } from '@spanforge/runtime';
import { ApiModule, createApiApplication, listenApi } from '@spanforge/api-app';
import { Gateway, GatewayModule } from '@spanforge/gateway-app';
import { WorkerModule, Workers } from '@spanforge/worker-app';
import { TenancyService } from '@spanforge/tenancy';

/**
 * `npm start`: gateway, workers and api in one process (one Nest application of the three roles'
 * modules, which share one instance of each service), on embedded PostgreSQL and chDB unless
 * DATABASE_URL / CLICKHOUSE_URL are set. chDB binds one data directory per process, which is why
 * the embedded mode is all-in-one.
 */
runRole('all-in-one', async (context) => {
  const app = await createApiApplication(context, roleRoot(context, [WorkerModule, GatewayModule, ApiModule.forRoot()]));
  await ensureDevelopmentProject(context, app.get(TenancyService));
  const workers = await app.get(Workers).start();
  const gateway = await app.get(Gateway).start();
  const api = await listenApi(context, app);
  return [
    ...gateway,
    `GraphQL    ${api.url}/graphql`,
    `Explorer   ${api.url}/graphiql`,
    `Health     ${api.url}/readyz   metrics ${api.url}/metrics`,
    ...workers,
  ];
});
