/** How often the sweep runs: retention promises answers within a day, storage within a week. */
export const RETENTION_SWEEP_INTERVAL_MS = 3_600_000;
/** The first sweep waits a whole interval after start: a process restarted often does not sweep each time. */
export const RETENTION_FIRST_SWEEP_MS = RETENTION_SWEEP_INTERVAL_MS;

export interface RetainingProject {
  tenantId: string;
  projectId: string;
  retentionDays: number;
}

export interface RetentionSweeperDeps {
  /** Every project with a retention. */
  projects: () => Promise<RetainingProject[]>;
  /** Deletes a project's rows its retention no longer keeps but their partitions would; returns the tables it touched. */
  removeOutlived: (project: RetainingProject) => Promise<string[]>;
  /** Empties the stored cost reports past their project's retention; returns how many. */
  expireReports: () => Promise<number>;
  log: { info(message: string): void; error(message: string, error?: unknown): void };
  intervalMs?: number;
  firstSweepMs?: number;
}

/**
 * What of each project's retention the engine does not do by itself, every hour (the first an hour
 * after start). ClickHouse drops expired rows by whole parts (docs/architecture.md, "Retention in
 * storage"); this removes the rows written before a project's retention was set or shortened,
 * whose parts would outlive it, and empties the cost reports kept in PostgreSQL. Idempotent:
 * several workers sweeping at once delete and empty the same rows.
 */
export class RetentionSweeper {
  private timer: NodeJS.Timeout | undefined;
  private sweeping: Promise<void> = Promise.resolve();
  private stopped = false;

  constructor(private readonly deps: RetentionSweeperDeps) {}

  start(): void {
    const run = () => {
      this.sweeping = this.sweeping.then(() => this.sweep());
    };
    this.timer = setTimeout(() => {
      run();
      this.timer = setInterval(run, this.deps.intervalMs ?? RETENTION_SWEEP_INTERVAL_MS);
      this.timer.unref();
    }, this.deps.firstSweepMs ?? RETENTION_FIRST_SWEEP_MS);
    this.timer.unref();
  }

  /** Stops after the project being swept (the next sweep starts over: every step is idempotent). */
  async stop(): Promise<void> {
    this.stopped = true;
    clearTimeout(this.timer);
    clearInterval(this.timer);
    await this.sweeping;
  }

  /** One sweep; each failure is logged with its reason, the rest goes on, and the next sweep tries again. */
  async sweep(): Promise<void> {
    if (this.stopped) return;
    try {
      const reports = await this.deps.expireReports();
      if (reports > 0) this.deps.log.info(`retention: ${reports} cost report(s) past their project's retention emptied`);
    } catch (error) {
      this.deps.log.error('retention: emptying expired cost reports failed; the next sweep tries again', error);
    }
    let projects: RetainingProject[];
    try {
      projects = await this.deps.projects();
    } catch (error) {
      this.deps.log.error('retention: reading the projects with a retention failed; the next sweep tries again', error);
      return;
    }
    for (const project of projects) {
      if (this.stopped) return;
      try {
        const tables = await this.deps.removeOutlived(project);
        if (tables.length > 0)
          this.deps.log.info(
            `retention: project ${project.projectId}: rows older than its ${project.retentionDays}-day retention, stored before it, deleted from ${tables.join(', ')}`,
          );
      } catch (error) {
        this.deps.log.error(
          `retention: project ${project.projectId}: deleting rows past its retention failed; the next sweep tries again`,
          error,
        );
      }
    }
  }
}
