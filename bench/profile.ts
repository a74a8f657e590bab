import { writeFileSync } from 'node:fs';
import { Session } from 'node:inspector/promises';
import path from 'node:path';

/** `--profile`: a V8 CPU profile of one phase, written next to the results (open it in Chrome DevTools). */
export async function profiled<T>(name: string, enabled: boolean, work: () => Promise<T>): Promise<T> {
  if (!enabled) return work();
  const session = new Session();
  session.connect();
  await session.post('Profiler.enable');
  await session.post('Profiler.start');
  try {
    return await work();
  } finally {
    const { profile } = await session.post('Profiler.stop');
    const file = path.resolve(__dirname, '..', '..', 'bench', 'results', `${name}.cpuprofile`);
    writeFileSync(file, JSON.stringify(profile));
    session.disconnect();
  }
}
