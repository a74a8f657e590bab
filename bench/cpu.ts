import { readFileSync, readdirSync } from 'node:fs';

/** The kernel's clock ticks a second in /proc's CPU times (USER_HZ, 100 on Linux whatever the kernel's own tick). */
const USER_HZ = 100;

/**
 * The CPU ticks of a /proc stat line: utime + stime (its 14th and 15th fields, counted after the
 * command name, which may hold spaces), and with `children` cutime + cstime too (the time of the
 * children that ended and were waited for).
 */
function statTicks(stat: string, children = false): number {
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  const own = Number(fields[11]) + Number(fields[12]);
  return children ? own + Number(fields[13]) + Number(fields[14]) : own;
}

/** The nice value of a /proc stat line (its 19th field, counted after the command name). */
function statNice(stat: string): number {
  return Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[16]);
}

/** A /proc file, or undefined when its process or thread ended while we looked. */
function procFileIfAlive(file: string): string | undefined {
  try {
    return readFileSync(file, 'utf8');
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'ENOENT' || code === 'ESRCH') return undefined;
    throw error;
  }
}

/** CPU seconds (user + system) of this process, libchdb's threads included, and of every postgres process. */
export function cpuSnapshot(): { node: number; postgres: number } {
  const usage = process.cpuUsage();
  let postgres = 0;
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    const stat = procFileIfAlive(`/proc/${entry}/stat`);
    if (stat === undefined || !stat.includes('(postgres)')) continue;
    // With the children's: the postmaster holds the time of the backends that ended.
    postgres += statTicks(stat, true) / USER_HZ;
  }
  return { node: (usage.user + usage.system) / 1e6, postgres };
}

export function cpuSince(before: { node: number; postgres: number }): { node: number; postgres: number } {
  const now = cpuSnapshot();
  return { node: Number((now.node - before.node).toFixed(2)), postgres: Number((now.postgres - before.postgres).toFixed(2)) };
}

/**
 * This process's CPU time in clock ticks: in all (its threads that ended included), and by live
 * thread (id → name, ticks and nice value). A name loses the digits at its end: the engine numbers
 * the threads of a pool (`QueryPipelineEx12`), and a pool's threads are counted together.
 */
export type ThreadTicks = { at: number; total: number; threads: Map<string, { name: string; ticks: number; nice: number }> };

/** CPU over an interval, in percent of one core: in all, and by thread name (ThreadTicks), with `exited threads`. */
export type CpuPercent = { total: number; byThread: Record<string, number> };

/**
 * This process's ThreadTicks, from each of /proc/self/task's threads' stat (one that ends mid-read is
 * skipped) and /proc/self/stat. Read synchronously, so that the reads are of about one instant: a
 * few hundred small files, where asynchronous reads would queue behind the engine's statements on
 * Node's thread pool.
 */
export function ownThreadTicks(): ThreadTicks {
  const threads = new Map<string, { name: string; ticks: number; nice: number }>();
  for (const id of readdirSync('/proc/self/task')) {
    // The name is the stat line's command (the thread's comm), between its first '(' and last ')'.
    const stat = procFileIfAlive(`/proc/self/task/${id}/stat`);
    if (stat === undefined) continue;
    const name = stat.slice(stat.indexOf('(') + 1, stat.lastIndexOf(')'));
    threads.set(id, { name: name.replace(/\d+$/, ''), ticks: statTicks(stat), nice: statNice(stat) });
  }
  // Read after the threads, so that their ticks are never newer than the total's.
  const total = statTicks(readFileSync('/proc/self/stat', 'utf8'));
  return { at: Date.now(), total, threads };
}

/**
 * The CPU between two ThreadTicks: the `top` names, and the ticks of threads that ended in between
 * (the total's rise less the live threads' rises). A thread that started in between counts from zero.
 */
export function cpuPercentBetween(before: ThreadTicks, after: ThreadTicks, top = 8): CpuPercent {
  const seconds = (after.at - before.at) / 1000;
  const percent = (ticks: number) => Number(((ticks / USER_HZ / seconds) * 100).toFixed(1));
  const byName = new Map<string, number>();
  for (const [id, { name, ticks }] of after.threads)
    byName.set(name, (byName.get(name) ?? 0) + ticks - (before.threads.get(id)?.ticks ?? 0));
  const live = [...byName.values()].reduce((a, b) => a + b, 0);
  const byThread = Object.fromEntries(
    [...byName]
      .sort((a, b) => b[1] - a[1])
      .slice(0, top)
      .map(([name, ticks]) => [name, percent(ticks)]),
  );
  return {
    total: percent(after.total - before.total),
    byThread: { ...byThread, 'exited threads': percent(after.total - before.total - live) },
  };
}
