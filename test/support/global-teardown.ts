import { rmSync } from 'node:fs';
import type { TestServices } from './global-setup';

export default async function globalTeardown(): Promise<void> {
  const services = (globalThis as Record<string, unknown>).__spanforgeServices as TestServices | undefined;
  services?.redis?.process.kill('SIGTERM');
  await services?.postgres.stop();
  // A process that is still finishing its writes there (a test worker's engine closing) makes a
  // directory non-empty again while it is removed: tried again a few times (ENOTEMPTY, EBUSY).
  if (process.env.SPANFORGE_TEST_ROOT)
    rmSync(process.env.SPANFORGE_TEST_ROOT, { recursive: true, force: true, maxRetries: 5, retryDelay: 200 });
}
