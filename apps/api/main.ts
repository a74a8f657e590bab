import 'reflect-metadata';
import { runRole } from '@spanforge/runtime';
import { startApiServer } from './src/api.server';

/** `npm run start:api`: GraphQL and REST only, against external PostgreSQL and ClickHouse. */
runRole('api', async (infra) => {
  const api = await startApiServer(infra);
  return [`GraphQL    ${api.url}/graphql`, `Explorer   ${api.url}/graphiql`, `Health     ${api.url}/readyz   metrics ${api.url}/metrics`];
});
