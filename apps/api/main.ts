import 'reflect-metadata';
import { roleRoot, runRole } from '@spanforge/runtime';
import { ApiModule } from './src/api.module';
import { createApiApplication, listenApi } from './src/api.server';

/** `npm run start:api`: GraphQL and REST only, against external PostgreSQL and ClickHouse. */
runRole('api', async (context) => {
  const api = await listenApi(context, await createApiApplication(context, roleRoot(context, [ApiModule.forRoot()])));
  return [`GraphQL    ${api.url}/graphql`, `Explorer   ${api.url}/graphiql`, `Health     ${api.url}/readyz   metrics ${api.url}/metrics`];
});
