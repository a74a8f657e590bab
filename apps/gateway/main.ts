import { runRole } from '@spanforge/runtime';
import { startGateway } from './src/gateway';

/** `npm run start:gateway`: the OTLP receivers only. */
runRole('gateway', startGateway);
