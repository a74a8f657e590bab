import { Queue, Worker, createPostgresBackend, withBackend, type QueueOptions, type WorkerOptions } from 'bullmq';
import IORedis from 'ioredis';
import { Pool } from 'pg';
import { JobConsumer, type JobConsumerOptions, type JobProcessor } from './job-consumer';

export type QueueBackendKind = 'redis' | 'postgres';

export interface QueueBackendOptions {
  /** Set: BullMQ on Redis. Unset: BullMQ's PostgreSQL backend on databaseUrl. */
  redisUrl?: string;
  databaseUrl: string;
}


/**
 * The one place that decides where the queues live. Producers and consumers ask it for
 * `Queue`/`Worker` objects and never learn which backend they got.
 */
export interface QueueBackend {
  readonly kind: QueueBackendKind;
  queue<T>(name: string, options?: Omit<QueueOptions, 'connection'>): Queue<T>;
  worker<T>(name: string, processor: JobProcessor<T>, options?: Omit<WorkerOptions, 'connection'>): Worker<T>;
  /** A consumer that takes the next job whenever a slot is free (see JobConsumer): for jobs that stay in flight a while. */
  consumer<T>(name: string, processor: JobProcessor<T>, options: JobConsumerOptions): JobConsumer<T>;
  /** Throws when the backend is unreachable (readiness). */
  ping(): Promise<void>;
  describe(): string;
  /** Closes every queue, worker and consumer it made, then its own connections. Consumers and workers first. */
  close(): Promise<void>;
}

export function createQueueBackend(options: QueueBackendOptions): QueueBackend {
  return options.redisUrl ? new RedisQueueBackend(options.redisUrl) : new PostgresQueueBackend(options.databaseUrl);
}

abstract class TrackingBackend implements QueueBackend {
  abstract readonly kind: QueueBackendKind;
  protected readonly queues: Queue[] = [];
  protected readonly workers: Worker[] = [];
  protected readonly jobConsumers: Array<JobConsumer<unknown>> = [];
  abstract queue<T>(name: string, options?: Omit<QueueOptions, 'connection'>): Queue<T>;
  /** A BullMQ Worker on this backend; `null` as processor for one whose jobs are fetched by hand. */
  protected abstract makeWorker<T>(name: string, processor: JobProcessor<T> | null, options: Omit<WorkerOptions, 'connection'>): Worker<T>;
  abstract ping(): Promise<void>;
  abstract describe(): string;
  protected abstract closeConnections(): Promise<void>;

  // Errors surface through the operations that failed; without a listener an 'error' event would crash the process.
  protected trackQueue<T>(queue: Queue<T>): Queue<T> {
    queue.on('error', () => undefined);
    this.queues.push(queue as unknown as Queue);
    return queue;
  }

  worker<T>(name: string, processor: JobProcessor<T>, options: Omit<WorkerOptions, 'connection'> = {}): Worker<T> {
    const worker = this.makeWorker(name, processor, options);
    worker.on('error', () => undefined);
    this.workers.push(worker as unknown as Worker);
    return worker;
  }

  consumer<T>(name: string, processor: JobProcessor<T>, options: JobConsumerOptions): JobConsumer<T> {
    // No processor and no autorun: the consumer fetches and finishes jobs itself, and closes the worker.
    // A 1 s block (instead of 5 s) bounds how long closing waits for the fetch on an empty queue.
    const worker = this.makeWorker<T>(name, null, { ...options, autorun: false, drainDelay: 1 });
    worker.on('error', () => undefined);
    const consumer = new JobConsumer<T>(worker, processor, options);
    this.jobConsumers.push(consumer as unknown as JobConsumer<unknown>);
    return consumer;
  }

  async close(): Promise<void> {
    await Promise.all(this.jobConsumers.map((c) => c.close()));
    await Promise.all(this.workers.map((w) => w.close()));
    await Promise.all(this.queues.map((q) => q.close()));
    await this.closeConnections();
  }
}

class RedisQueueBackend extends TrackingBackend {
  readonly kind = 'redis';
  /** Producers fail fast while Redis is down (the gateway answers 503) instead of queueing commands. */
  private readonly producer: IORedis;
  private readonly consumers: IORedis[] = [];

  constructor(private readonly url: string) {
    super();
    this.producer = new IORedis(url, { maxRetriesPerRequest: 1, enableOfflineQueue: false, lazyConnect: false });
    this.producer.on('error', () => undefined);
  }

  queue<T>(name: string, options: Omit<QueueOptions, 'connection'> = {}): Queue<T> {
    return this.trackQueue(new Queue<T>(name, { ...options, connection: this.producer }));
  }

  protected makeWorker<T>(name: string, processor: JobProcessor<T> | null, options: Omit<WorkerOptions, 'connection'>): Worker<T> {
    // Workers block on Redis and must retry forever (BullMQ requires maxRetriesPerRequest: null).
    const connection = new IORedis(this.url, { maxRetriesPerRequest: null });
    connection.on('error', () => undefined);
    this.consumers.push(connection);
    return new Worker<T>(name, processor, { ...options, connection });
  }

  async ping(): Promise<void> {
    if (this.producer.status !== 'ready') await waitForReady(this.producer, 2_000);
    await this.producer.ping();
  }

  describe(): string {
    const url = new URL(this.url);
    return `BullMQ on Redis ${url.host}`;
  }

  protected async closeConnections(): Promise<void> {
    await Promise.all([this.producer, ...this.consumers].map((c) => c.quit().catch(() => c.disconnect())));
  }
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

  constructor(private readonly url: string) {
    super();
    this.health = new Pool({ connectionString: url, max: 1, application_name: 'spanforge-queue-health' });
    this.health.on('error', () => undefined);
  }

  /** BullMQ creates its schema on first connect (`migrate: true`); without it it refuses to start. */
  private connection() {
    return { connectionString: this.url, migrate: true, max: 4, application_name: 'spanforge-queue' };
  }

  queue<T>(name: string, options: Omit<QueueOptions, 'connection'> = {}): Queue<T> {
    // The Redis-typed Queue is the public face; the class is the same, only its backend differs.
    return this.trackQueue(new PostgresClasses.Queue<T>(name, { ...options, connection: this.connection() }) as unknown as Queue<T>);
  }

  protected makeWorker<T>(name: string, processor: JobProcessor<T> | null, options: Omit<WorkerOptions, 'connection'>): Worker<T> {
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
