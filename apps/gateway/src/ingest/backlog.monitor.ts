import type { Queue } from 'bullmq';

/**
 * Watches the ingest queue's backlog so the gateway can refuse (429 for a project over its share,
 * 503 for all past the overflow) before the queue grows without bound. Polled (not asked per request): one count query a second whatever the request rate.
 */
export class BacklogMonitor {
  private backlog = 0;
  private activeJobs = 0;
  private timer: NodeJS.Timeout | undefined;

  /** Whether the last poll failed: a failure is said once, and so is the recovery. */
  private failing = false;

  constructor(
    private readonly queue: Queue,
    private readonly maxBacklog: number,
    private readonly log: { warn(message: string): void; info(message: string): void },
    private readonly intervalMs = 1_000,
  ) {}

  start(): void {
    const poll = async () => {
      try {
        const counts = await this.queue.getJobCounts('waiting', 'delayed', 'prioritized', 'active');
        this.backlog = counts.waiting! + counts.delayed! + counts.prioritized!;
        this.activeJobs = counts.active!;
        if (this.failing) this.log.info('ingest queue depth readable again');
        this.failing = false;
      } catch (error) {
        // Unreachable queue: the last depth stands, and the next enqueue fails and answers 503 on its own.
        if (!this.failing) this.log.warn(`cannot read the ingest queue's depth (kept at ${this.backlog}): ${(error as Error).message}`);
        this.failing = true;
      }
      this.timer = setTimeout(poll, this.intervalMs);
      this.timer.unref();
    };
    void poll();
  }

  get depth(): number {
    return this.backlog;
  }

  /** Jobs some worker holds now (including those of a crashed worker until their lock lapses). */
  get active(): number {
    return this.activeJobs;
  }

  /** QUEUE_MAX_BACKLOG: past it the queue is for projects under their share only (backlog-shares.ts). */
  get cap(): number {
    return this.maxBacklog;
  }

  stop(): void {
    clearTimeout(this.timer);
  }
}
