import { runRole } from '@spanforge/runtime';
import { startWorkers } from './src/worker';

/** `npm run start:worker`: queue consumers and schedulers; no HTTP server. */
runRole('worker', startWorkers);
