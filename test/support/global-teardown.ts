import { rmSync } from 'node:fs';
import type { TestServices } from './global-setup';

export default async function globalTeardown(): Promise<void> {
  const services = (globalThis as Record<string, unknown>).__spanforgeServices as TestServices | undefined;
  services?.redis?.process.kill('SIGTERM');
  await services?.postgres.stop();
  if (process.env.SPANFORGE_TEST_ROOT) rmSync(process.env.SPANFORGE_TEST_ROOT, { recursive: true, force: true });
}
