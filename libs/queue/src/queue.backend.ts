import { hostname } from 'node:os';
import { Queue, Worker, createPostgresBackend, withBackend, type Job, type QueueOptions, type WorkerOptions } from 'bullmq';
import IORedis from 'ioredis';
import { Pool } from 'pg';
import { ThrottledWarning, reasonOf, stderrLog, type ErrorLog } from '@spanforge/postgres';
import { JobConsumer, type JobConsumerOptions, type JobProcessor } from './job-consumer';

/**
 * The name each job records as its `processedBy` while a process of ours holds it (BullMQ's
 * worker name): which host and process has an active job, for an operator looking at the queue
 * and for the tests that kill a worker holding jobs.
 */
const PROCESS_NAME = `${hostname()}:${process.pid}`;

export type QueueBackendKind = 'redis' | 'postgres';

export interface QueueBackendOptions {
  /** Set: BullMQ on Redis. Unset: BullMQ's PostgreSQL backend on databaseUrl. */
  redisUrl?: string;
  databaseUrl: string;
  /** Where 'error' events of its connections, queues and workers are said (at most one line per object per 10 s). */
  log?: ErrorLog;
}

/**
 * A BullMQ Worker's processor: the job and the lock token its worker holds, which a processor needs
 * to move its own job (`job.moveToDelayed(at, token)` then `throw new DelayedError()`).
 */
export type WorkerProcessor<T> = (job: Job<T>, token?: string) => Promise<unknown>;

/**
 * The one place that decides where the queues live. Producers and consumers ask it for
 * `Queue`/`Worker` objects and never learn which backend they got.
 */
export interface QueueBackend {
  readonly kind: QueueBackendKind;
  queue<T>(name: string, options?: Omit<QueueOptions, 'connection'>): Queue<T>;
  worker<T>(name: string, processor: WorkerProcessor<T>, options?: Omit<WorkerOptions, 'connection'>): Worker<T>;
  /** A consumer that takes the next job whenever a slot is free (see JobConsumer): for jobs that stay in flight a while. */
  consumer<T>(name: string, processor: JobProcessor<T>, options: JobConsumerOptions): JobConsumer<T>;
  /** Throws when the backend is unreachable (readiness). */
  ping(): Promise<void>;
  describe(): string;
  /** Closes every queue, worker and consumer it made, then its own connections. Consumers and workers first. */
  close(): Promise<void>;
}

export function createQueueBackend(options: QueueBackendOptions): QueueBackend {
  const log = options.log ?? stderrLog('queue');
  return options.redisUrl ? new RedisQueueBackend(options.redisUrl, log) : new PostgresQueueBackend(options.databaseUrl, log);
}

/** Anything with 'error' events: ioredis connections, pg pools, BullMQ queues and workers. */
interface ErrorEmitter {
  on(event: 'error', listener: (error: Error) => void): unknown;
}

abstract class TrackingBackend implements QueueBackend {
  abstract readonly kind: QueueBackendKind;
  protected readonly queues: Queue[] = [];
  protected readonly workers: Worker[] = [];
  protected readonly jobConsumers: Array<JobConsumer<unknown>> = [];
  abstract queue<T>(name: string, options?: Omit<QueueOptions, 'connection'>): Queue<T>;
  /** A BullMQ Worker on this backend; `null` as processor for one whose jobs are fetched by hand. */
  protected abstract makeWorker<T>(
    name: string,
    processor: WorkerProcessor<T> | null,
    options: Omit<WorkerOptions, 'connection'>,
  ): Worker<T>;
  abstract ping(): Promise<void>;
  abstract describe(): string;
  protected abstract closeConnections(): Promise<void>;
  private readonly warnings: ThrottledWarning[] = [];

  constructor(protected readonly log: ErrorLog) {}

  /**
   * Says the 'error' events of one connection, queue or worker: without a listener they would crash
   * the process, and unsaid they would leave a failing queue (Redis down, a lost PostgreSQL
   * connection, a lock that could not be renewed) without a reason in the logs. The operations that
   * failed also fail on their own; a server that is down repeats the event on every reconnect
   * attempt, hence at most one line per object per 10 s, with the count of the others.
   */
  protected reportErrors(emitter: ErrorEmitter, what: string): void {
    const warning = new ThrottledWarning(this.log);
    this.warnings.push(warning);
    emitter.on('error', (error) => warning.warn(`${what}: ${reasonOf(error)}`));
  }

  protected trackQueue<T>(name: string, queue: Queue<T>): Queue<T> {
    this.reportErrors(queue as unknown as ErrorEmitter, `queue "${name}" (${this.kind})`);
    this.queues.push(queue as unknown as Queue);
    return queue;
  }

  worker<T>(name: string, processor: WorkerProcessor<T>, options: Omit<WorkerOptions, 'connection'> = {}): Worker<T> {
    const worker = this.makeWorker(name, processor, { name: PROCESS_NAME, ...options });
    this.reportErrors(worker as unknown as ErrorEmitter, `worker of queue "${name}" (${this.kind})`);
    this.workers.push(worker as unknown as Worker);
    return worker;
  }

  consumer<T>(name: string, processor: JobProcessor<T>, options: JobConsumerOptions): JobConsumer<T> {
    // No processor and no autorun: the consumer fetches and finishes jobs itself, and closes the worker.
    // A 1 s block (instead of 5 s) bounds how long closing waits for the fetch on an empty queue.
    const worker = this.makeWorker<T>(name, null, { name: PROCESS_NAME, ...options, autorun: false, drainDelay: 1 });
    this.reportErrors(worker as unknown as ErrorEmitter, `consumer of queue "${name}" (${this.kind})`);
    const consumer = new JobConsumer<T>(worker, processor, options);
    this.jobConsumers.push(consumer as unknown as JobConsumer<unknown>);
    return consumer;
  }

  async close(): Promise<void> {
    try {
      await Promise.all(this.jobConsumers.map((c) => c.close()));
      await Promise.all(this.workers.map((w) => w.close()));
      await Promise.all(this.queues.map((q) => q.close()));
      await this.closeConnections();
    } finally {
      // Warnings still held back are said before the process goes.
      for (const warning of this.warnings) warning.flush();
    }
  }
}

class RedisQueueBackend extends TrackingBackend {
  readonly kind = 'redis';
  /** Producers fail fast while Redis is down (the gateway answers 503) instead of queueing commands. */
  private readonly producer: IORedis;
  private readonly consumers: IORedis[] = [];

  constructor(
    private readonly url: string,
    log: ErrorLog,
  ) {
    super(log);
    this.producer = new IORedis(url, { maxRetriesPerRequest: 1, enableOfflineQueue: false, lazyConnect: false });
    this.reportErrors(this.producer, `Redis connection of the producers (${redisHost(url)})`);
  }

  queue<T>(name: string, options: Omit<QueueOptions, 'connection'> = {}): Queue<T> {
    return this.trackQueue(name, new Queue<T>(name, { ...options, connection: this.producer }));
  }

  protected makeWorker<T>(name: string, processor: WorkerProcessor<T> | null, options: Omit<WorkerOptions, 'connection'>): Worker<T> {
    // Workers block on Redis and must retry forever (BullMQ requires maxRetriesPerRequest: null).
    const connection = new IORedis(this.url, { maxRetriesPerRequest: null });
    this.reportErrors(connection, `Redis connection of the worker of queue "${name}" (${redisHost(this.url)})`);
    this.consumers.push(connection);
    return new Worker<T>(name, processor, { ...options, connection });
  }

  async ping(): Promise<void> {
    if (this.producer.status !== 'ready') await waitForReady(this.producer, 2_000);
    await this.producer.ping();
  }

  describe(): string {
    return `BullMQ on Redis ${redisHost(this.url)}`;
  }

  protected async closeConnections(): Promise<void> {
    await Promise.all(
      [this.producer, ...this.consumers].map((c) =>
        c.quit().catch((error: unknown) => {
          // QUIT needs a live connection; one that is down (or already closed) is simply dropped, which is what closing wants.
          this.log.debug?.(`Redis connection did not take QUIT (${reasonOf(error)}); disconnecting it`);
          c.disconnect();
        }),
      ),
    );
  }
}

/** host:port only: the URL may carry a password. */
function redisHost(url: string): string {
  return new URL(url).host;
}

/** The producer connection refuses commands until connected (no offline queue); wait for it, bounded. */
function waitForReady(connection: IORedis, timeoutMs: number): Promise<void> {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      connection.off('ready', onReady);
      reject(new Error(`Redis not reachable within ${timeoutMs} ms (status ${connection.status})`));
    }, timeoutMs);
    const onReady = () => {
      clearTimeout(timer);
      resolve();
    };
    connection.once('ready', onReady);
  });
}

const PostgresClasses = withBackend(createPostgresBackend);

class PostgresQueueBackend extends TrackingBackend {
  readonly kind = 'postgres';
  private readonly health: Pool;

  constructor(
    private readonly url: string,
    log: ErrorLog,
  ) {
    super(log);
    this.health = new Pool({ connectionString: url, max: 1, application_name: 'spanforge-queue-health' });
    this.reportErrors(this.health, 'PostgreSQL connection of the queue health check');
  }

  /** BullMQ creates its schema on first connect (`migrate: true`); without it it refuses to start. */
  private connection() {
    return { connectionString: this.url, migrate: true, max: 4, application_name: 'spanforge-queue' };
  }

  queue<T>(name: string, options: Omit<QueueOptions, 'connection'> = {}): Queue<T> {
    // The Redis-typed Queue is the public face; the class is the same, only its backend differs.
    return this.trackQueue(name, new PostgresClasses.Queue<T>(name, { ...options, connection: this.connection() }) as unknown as Queue<T>);
  }

  protected makeWorker<T>(name: string, processor: WorkerProcessor<T> | null, options: Omit<WorkerOptions, 'connection'>): Worker<T> {
    return new PostgresClasses.Worker<T>(name, processor, { ...options, connection: this.connection() }) as unknown as Worker<T>;
  }

  async ping(): Promise<void> {
    await this.health.query('SELECT 1');
  }

  describe(): string {
    return 'BullMQ on PostgreSQL';
  }

  protected async closeConnections(): Promise<void> {
    await this.health.end();
  }
}
