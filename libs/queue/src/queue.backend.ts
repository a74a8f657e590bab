import { Queue, Worker, createPostgresBackend, withBackend, type Job, type QueueOptions, type WorkerOptions } from 'bullmq';
import IORedis from 'ioredis';
import { Pool } from 'pg';

export type QueueBackendKind = 'redis' | 'postgres';

export interface QueueBackendOptions {
  /** Set: BullMQ on Redis. Unset: BullMQ's PostgreSQL backend on databaseUrl. */
  redisUrl?: string;
  databaseUrl: string;
}

export type JobProcessor<T> = (job: Job<T>) => Promise<unknown>;

/**
 * The one place that decides where the queues live. Producers and consumers ask it for
 * `Queue`/`Worker` objects and never learn which backend they got.
 */
export interface QueueBackend {
  readonly kind: QueueBackendKind;
  queue<T>(name: string, options?: Omit<QueueOptions, 'connection'>): Queue<T>;
  worker<T>(name: string, processor: JobProcessor<T>, options?: Omit<WorkerOptions, 'connection'>): Worker<T>;
  /** Throws when the backend is unreachable (readiness). */
  ping(): Promise<void>;
  describe(): string;
  /** Closes every queue and worker it made, then its own connections. Workers first. */
  close(): Promise<void>;
}

export function createQueueBackend(options: QueueBackendOptions): QueueBackend {
  return options.redisUrl ? new RedisQueueBackend(options.redisUrl) : new PostgresQueueBackend(options.databaseUrl);
}

abstract class TrackingBackend implements QueueBackend {
  abstract readonly kind: QueueBackendKind;
  protected readonly queues: Queue[] = [];
  protected readonly workers: Worker[] = [];
  abstract queue<T>(name: string, options?: Omit<QueueOptions, 'connection'>): Queue<T>;
  abstract worker<T>(name: string, processor: JobProcessor<T>, options?: Omit<WorkerOptions, 'connection'>): Worker<T>;
  abstract ping(): Promise<void>;
  abstract describe(): string;
  protected abstract closeConnections(): Promise<void>;

  // Errors surface through the operations that failed; without a listener an 'error' event would crash the process.
  protected trackQueue<T>(queue: Queue<T>): Queue<T> {
    queue.on('error', () => undefined);
    this.queues.push(queue as unknown as Queue);
    return queue;
  }

  protected trackWorker<T>(worker: Worker<T>): Worker<T> {
    worker.on('error', () => undefined);
    this.workers.push(worker as unknown as Worker);
    return worker;
  }

  async close(): Promise<void> {
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

  worker<T>(name: string, processor: JobProcessor<T>, options: Omit<WorkerOptions, 'connection'> = {}): Worker<T> {
    // Workers block on Redis and must retry forever (BullMQ requires maxRetriesPerRequest: null).
    const connection = new IORedis(this.url, { maxRetriesPerRequest: null });
    connection.on('error', () => undefined);
    this.consumers.push(connection);
    return this.trackWorker(new Worker<T>(name, processor, { ...options, connection }));
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

  worker<T>(name: string, processor: JobProcessor<T>, options: Omit<WorkerOptions, 'connection'> = {}): Worker<T> {
    const worker = new PostgresClasses.Worker<T>(name, processor, { ...options, connection: this.connection() });
    return this.trackWorker(worker as unknown as Worker<T>);
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
