import { readFileSync, readdirSync } from 'node:fs';

/** CPU seconds (user + system) of this process, libchdb's threads included, and of every postgres process. */
export function cpuSnapshot(): { node: number; postgres: number } {
  const usage = process.cpuUsage();
  let postgres = 0;
  const ticks = 100; // USER_HZ on Linux
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
      if (!stat.includes('(postgres)')) continue;
      const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      // utime + stime, and cutime + cstime: the postmaster holds the time of the backends that ended.
      postgres += (Number(fields[11]) + Number(fields[12]) + Number(fields[13]) + Number(fields[14])) / ticks;
    } catch {
      // The process ended while we looked.
    }
  }
  return { node: (usage.user + usage.system) / 1e6, postgres };
}

export function cpuSince(before: { node: number; postgres: number }): { node: number; postgres: number } {
  const now = cpuSnapshot();
  return { node: Number((now.node - before.node).toFixed(2)), postgres: Number((now.postgres - before.postgres).toFixed(2)) };
}
