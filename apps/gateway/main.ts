import 'reflect-metadata';
import { createRoleContext, runRole } from '@spanforge/runtime';
import { Gateway, GatewayModule } from './src/gateway';

/** `npm run start:gateway`: the OTLP receivers only (a Nest application context: no Nest HTTP server). */
runRole('gateway', async (context) => {
  const app = await createRoleContext(context, [GatewayModule]);
  return app.get(Gateway).start();
});
