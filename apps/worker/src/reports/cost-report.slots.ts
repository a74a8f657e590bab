/** Why a report job was put back for later (the `reason` label of the deferral counter). */
export type DeferralReason =
  /** The project already has its share of this process's report slots in use. */
  | 'project_busy'
  /** A job deferred before came back (woken, or its delay lapsed) and found the project's share in use again. */
  | 'still_busy';

interface Deferred<W> {
  waiter: W;
  /** When the job was first deferred: its place in the project's line, kept while it comes and goes. */
  since: number;
  /** When its delay lapses and the queue hands it out again by itself (ms). */
  until: number;
  /** Asked to come back early (promoted) and not seen since. */
  woken: boolean;
}

/**
 * Per-project shares of one process's report slots, and the line of each project's deferred jobs
 * (no I/O: the worker moves the jobs, this decides). A project runs at most `perProject` jobs at
 * once here; a job past that is deferred and noted, and each slot the project gives back wakes its
 * longest-deferred job that is still waiting out its delay. A woken job that finds the slot taken
 * again (a newer job of the project got there first) keeps its place at the front of the line, so
 * a deferred job waits for the project's jobs ahead of it, not for ever.
 *
 * Notes of jobs that went elsewhere (another process took them once their delay lapsed) are
 * dropped `graceMs` after their delay lapsed, so the notes stay as few as the jobs deferred lately.
 */
export class ProjectSlots<W> {
  private readonly running = new Map<string, number>();
  private readonly lines = new Map<string, Map<string, Deferred<W>>>();

  constructor(
    readonly perProject: number,
    private readonly graceMs: number,
    private readonly now: () => number = Date.now,
  ) {
    if (!Number.isInteger(perProject) || perProject < 1)
      throw new Error(`report jobs per project must be a whole number ≥ 1, not ${perProject}`);
  }

  /** Takes a slot of the project for this job; false when the project's share is in use (defer the job). */
  take(projectId: string, jobId: string): boolean {
    const running = this.running.get(projectId) ?? 0;
    if (running >= this.perProject) return false;
    this.running.set(projectId, running + 1);
    this.lines.get(projectId)?.delete(jobId);
    return true;
  }

  /** Whether the project could take a slot now. */
  hasFree(projectId: string): boolean {
    return (this.running.get(projectId) ?? 0) < this.perProject;
  }

  /** Gives a slot back; then wake `nextToWake(projectId)`. */
  release(projectId: string): void {
    const running = (this.running.get(projectId) ?? 0) - 1;
    if (running > 0) this.running.set(projectId, running);
    else this.running.delete(projectId);
  }

  /** Notes a job deferred until `until` (ms); a job already in the line keeps its place. */
  defer(projectId: string, jobId: string, waiter: W, until: number): DeferralReason {
    this.prune();
    let line = this.lines.get(projectId);
    if (!line) this.lines.set(projectId, (line = new Map()));
    const before = line.get(jobId);
    line.set(jobId, { waiter, since: before?.since ?? this.now(), until, woken: false });
    return before ? 'still_busy' : 'project_busy';
  }

  /**
   * The project's longest-deferred job still waiting out its delay and not woken yet, marked woken;
   * undefined when there is none. Call again if waking it fails (it may have left the delayed set).
   */
  nextToWake(projectId: string): W | undefined {
    const now = this.now();
    let next: Deferred<W> | undefined;
    for (const entry of this.lines.get(projectId)?.values() ?? []) {
      if (!entry.woken && entry.until > now && (!next || entry.since < next.since)) next = entry;
    }
    if (!next) return undefined;
    next.woken = true;
    return next.waiter;
  }

  /** Jobs noted as deferred here, all projects (for tests and debugging). */
  deferredCount(): number {
    let count = 0;
    for (const line of this.lines.values()) count += line.size;
    return count;
  }

  private prune(): void {
    const horizon = this.now() - this.graceMs;
    for (const [projectId, line] of this.lines) {
      for (const [jobId, entry] of line) if (entry.until < horizon) line.delete(jobId);
      if (line.size === 0) this.lines.delete(projectId);
    }
  }
}
