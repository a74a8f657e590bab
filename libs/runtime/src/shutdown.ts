import type { Logger } from './logger';

/** Phases in the order they run, whatever order the steps were added in. */
export const SHUTDOWN_PHASES = ['stop-accepting', 'drain', 'flush', 'close-clients', 'stop-services', 'release-data-dir'] as const;
export type ShutdownPhase = (typeof SHUTDOWN_PHASES)[number];

export interface ShutdownStep {
  phase: ShutdownPhase;
  name: string;
  run: () => Promise<void>;
}

/**
 * Ordered teardown by phase — stop accepting, drain workers and queues, flush ClickHouse writes,
 * close clients, stop embedded PostgreSQL, release DATA_DIR — each step bounded by a timeout so one stuck
 * dependency cannot keep the process alive. A failed step is logged and the next one still runs.
 */
export class ShutdownSequence {
  private readonly steps: ShutdownStep[] = [];
  private running: Promise<void> | undefined;

  constructor(
    private readonly log: Logger,
    private readonly stepTimeoutMs = 15_000,
  ) {}

  add(phase: ShutdownPhase, name: string, run: () => Promise<void>): void {
    this.steps.push({ phase, name, run });
  }

  run(): Promise<void> {
    this.running ??= this.runSteps();
    return this.running;
  }

  private async runSteps(): Promise<void> {
    const ordered = [...this.steps].sort((a, b) => SHUTDOWN_PHASES.indexOf(a.phase) - SHUTDOWN_PHASES.indexOf(b.phase));
    for (const step of ordered) {
      const started = performance.now();
      let timer: NodeJS.Timeout | undefined;
      try {
        await Promise.race([
          step.run(),
          new Promise((_, reject) => {
            timer = setTimeout(() => reject(new Error(`did not finish in ${this.stepTimeoutMs} ms`)), this.stepTimeoutMs);
          }),
        ]);
        this.log.debug(`shutdown: ${step.name} (${Math.round(performance.now() - started)} ms)`);
      } catch (error) {
        this.log.error(`shutdown: ${step.name} failed`, error);
      } finally {
        clearTimeout(timer);
      }
    }
  }

  /**
   * SIGINT/SIGTERM start the sequence once. Ctrl-C under `npm start` delivers SIGINT twice (the
   * terminal signals the whole process group and npm forwards it), so repeats within 2 s are
   * ignored; a later one exits at once.
   */
  installSignalHandlers(onDone: () => void = () => process.exit(0)): void {
    let firstAt: number | undefined;
    const handler = (signal: NodeJS.Signals) => {
      if (firstAt !== undefined) {
        if (Date.now() - firstAt < 2_000) return;
        this.log.warn(`${signal} again: exiting without finishing the shutdown`);
        process.exit(130);
      }
      firstAt = Date.now();
      this.log.info(`${signal}: shutting down (stop accepting, drain, flush, close)`);
      const started = Date.now();
      const finish = () => {
        this.log.info(`stopped in ${Date.now() - started} ms`);
        onDone();
      };
      this.run().then(finish, finish);
    };
    process.on('SIGINT', handler);
    process.on('SIGTERM', handler);
  }
}
