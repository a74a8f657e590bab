import 'reflect-metadata';
import { createRoleContext, runRole } from '@spanforge/runtime';
import { WorkerModule, Workers } from './src/worker';

/** `npm run start:worker`: queue consumers and schedulers; no HTTP server (a Nest application context). */
runRole('worker', async (context) => {
  const app = await createRoleContext(context, [WorkerModule]);
  return app.get(Workers).start();
});
