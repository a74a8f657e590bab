import path from 'node:path';

/** Everything the processes read from the environment, validated once at boot. */
export interface AppConfig {
  dataDir: string;
  host: string;
  ports: { otlpHttp: number; otlpGrpc: number; api: number };
  /** Set from the environment; otherwise the launcher generates one and keeps it under dataDir. */
  adminToken?: string;
  /** Secret mixed into every API key hash; kept out of PostgreSQL on purpose. */
  keyPepper?: string;
  databaseUrl?: string;
  /**
   * A ClickHouse server over HTTP. `cluster`: the server is a cluster in the schema's cluster form
   * (Replicated tables behind Distributed ones); statements then carry the cluster's consistency
   * settings (docs/scaling.md, "Several workers on a cluster"), and `maxClockOffsetMs` bounds how
   * far two of its servers' clocks may differ (CLICKHOUSE_MAX_CLOCK_OFFSET_MS).
   */
  clickhouse?: { url: string; username: string; password: string; database: string } & (
    { cluster?: undefined; maxClockOffsetMs?: undefined } | { cluster: string; maxClockOffsetMs: number }
  );
  /** Database used by the embedded chDB engine and as the default for a server. */
  clickhouseDatabase: string;
  redisUrl?: string;
  otlpMaxBodyBytes: number;
  logLevel: LogLevel;
  /** Cap on waiting + delayed ingest jobs before the gateway answers 503. */
  queueMaxBacklog: number;
  allowPrivateWebhooks: boolean;
  /** ClickHouse limits of each API query: one that needs more is QUERY_TOO_EXPENSIVE. */
  queryLimits: QueryLimits;
  /** Per project, on each api process: over them a request is RATE_LIMITED (GraphQL) or 429 (REST). */
  apiLimits: ApiLimits;
  /** API statements run at once on a ClickHouse server, shared fairly between projects (embedded chDB: 1). */
  clickhouseQuerySlots: number;
  /** Embedded engine: the most of the express lane's time one project may hold over about the last second (%; 100: no cap). */
  clickhouseExpressSharePercent: number;
  /** Embedded engine: the size of its query condition cache (MiB, as the engine counts its entries; 0: keeps none). */
  clickhouseConditionCacheMiB: number;
  /** Embedded engine: the nice value its merges run at (0–19; 19, the shared lane's, unless told). */
  clickhouseMergeNice: number;
  /** The span-metrics sealer (span_metrics_minute): how old a minute must be, and how often it looks. */
  metricsSeal: { afterSeconds: number; intervalMs: number };
  /** How often each process hands the heap pages V8 freed back to the system (s; 0: only when it idles, as V8 does alone). */
  heapReleaseSeconds: number;
}

/** What one project may ask of one api process. */
export interface ApiLimits {
  /** Requests a second (a burst of two seconds' worth is allowed). */
  requestsPerSecond: number;
  /** Requests in progress at once. */
  concurrentRequests: number;
}

/** Per-query ClickHouse limits (max_execution_time, max_memory_usage, max_rows_to_read) and the most an answer may hold. */
export interface QueryLimits {
  maxExecutionSeconds: number;
  maxMemoryBytes: number;
  maxRowsToRead: number;
  /** The largest answer (JSON text) the API takes from one statement; a larger one is refused before it is parsed. */
  maxResultBytes: number;
}

/** The limits of a query when nobody set others: API queries without QUERY_* set, cost reports. */
export const DEFAULT_QUERY_LIMITS: Readonly<QueryLimits> = Object.freeze({
  maxExecutionSeconds: 10,
  maxMemoryBytes: 2 * 1024 ** 3,
  maxRowsToRead: 2_000_000_000,
  maxResultBytes: 256 * 1024 ** 2,
});

/**
 * The embedded engine's query condition cache (MiB, as the engine counts its entries, which hold
 * about three times that): a round of the upkeep needs a few hundred entries, and under a soak's
 * load the all-in-one's count grew 0.064–0.11 MiB a minute, so 2 MiB keeps up to the last 20–30
 * minutes' entries (fewer while entries asked for again fill its protected half; docs/scaling.md,
 * "Memory of the all-in-one").
 */
export const DEFAULT_CONDITION_CACHE_MIB = 2;

/**
 * The nice value of the embedded engine's merges while they run: the lowest priority, that of the
 * shared lane's statements whose parts they merge, so that a large merge shares the cores with the
 * worker rather than taking them first (docs/scaling.md, "The merges' priority").
 */
export const DEFAULT_MERGE_NICE = 19;

export const LOG_LEVELS = ['debug', 'info', 'warn', 'error', 'silent'] as const;
export type LogLevel = (typeof LOG_LEVELS)[number];

export class ConfigError extends Error {
  constructor(readonly problems: string[]) {
    super(
      `Invalid configuration (${problems.length} problem${problems.length === 1 ? '' : 's'}):\n${problems.map((p) => `  - ${p}`).join('\n')}`,
    );
    this.name = 'ConfigError';
  }
}

type Env = Record<string, string | undefined>;

/** Collects every problem instead of stopping at the first, so one boot shows them all. */
class EnvReader {
  readonly problems: string[] = [];
  constructor(private readonly env: Env) {}

  raw(name: string): string | undefined {
    const value = this.env[name];
    return value === undefined || value.trim() === '' ? undefined : value.trim();
  }

  string(name: string, fallback: string): string {
    return this.raw(name) ?? fallback;
  }

  port(name: string, fallback: number): number {
    return this.integer(name, fallback, 0, 65535);
  }

  integer(name: string, fallback: number, min: number, max: number): number {
    const value = this.raw(name);
    if (value === undefined) return fallback;
    if (!/^\d+$/.test(value) || Number(value) < min || Number(value) > max) {
      this.problems.push(`${name}="${value}" must be an integer from ${min} to ${max}`);
      return fallback;
    }
    return Number(value);
  }

  boolean(name: string, fallback: boolean): boolean {
    const value = this.raw(name);
    if (value === undefined) return fallback;
    if (/^(true|1|yes)$/i.test(value)) return true;
    if (/^(false|0|no)$/i.test(value)) return false;
    this.problems.push(`${name}="${value}" must be true or false`);
    return fallback;
  }

  url(name: string, protocols: string[]): string | undefined {
    const value = this.raw(name);
    if (value === undefined) return undefined;
    let parsed: URL;
    try {
      parsed = new URL(value);
    } catch {
      // The value may hold a password: never echo it back.
      this.problems.push(`${name} is not a valid URL (expected ${protocols.map((p) => `${p}//…`).join(' or ')})`);
      return undefined;
    }
    if (!protocols.includes(parsed.protocol)) {
      this.problems.push(`${name} must use ${protocols.join(' or ')} (got ${parsed.protocol})`);
      return undefined;
    }
    return value;
  }

  oneOf<T extends string>(name: string, allowed: readonly T[], fallback: T): T {
    const value = this.raw(name);
    if (value === undefined) return fallback;
    if (!(allowed as readonly string[]).includes(value)) {
      this.problems.push(`${name}="${value}" must be one of ${allowed.join(', ')}`);
      return fallback;
    }
    return value as T;
  }

  secret(name: string, minLength: number): string | undefined {
    const value = this.raw(name);
    if (value !== undefined && value.length < minLength) {
      this.problems.push(`${name} must be at least ${minLength} characters`);
      return undefined;
    }
    return value;
  }

  identifier(name: string, fallback: string): string {
    const value = this.string(name, fallback);
    if (!/^[A-Za-z_][A-Za-z0-9_]{0,62}$/.test(value)) {
      this.problems.push(`${name}="${value}" must be a plain identifier (letters, digits, underscore)`);
      return fallback;
    }
    return value;
  }
}

const MiB = 1024 * 1024;

/** Reads and validates the environment. Throws one ConfigError listing every bad variable. */
export function loadConfig(env: Env, cwd: string = process.cwd()): AppConfig {
  const r = new EnvReader(env);
  const clickhouseUrl = r.url('CLICKHOUSE_URL', ['http:', 'https:']);
  const clickhouseDatabase = r.identifier('CLICKHOUSE_DATABASE', 'spanforge');
  const clickhouseCluster = r.raw('CLICKHOUSE_CLUSTER') === undefined ? undefined : r.identifier('CLICKHOUSE_CLUSTER', 'cluster');
  if (clickhouseCluster !== undefined && !clickhouseUrl) r.problems.push('CLICKHOUSE_CLUSTER needs CLICKHOUSE_URL (a cluster is a server)');
  const server = clickhouseUrl
    ? {
        url: clickhouseUrl,
        username: r.string('CLICKHOUSE_USER', 'default'),
        password: r.string('CLICKHOUSE_PASSWORD', ''),
        database: clickhouseDatabase,
      }
    : undefined;
  // Each release pauses the process (about 0.1–0.2 s): more often than every 10 s it would stop it for a tenth of its time.
  const heapReleaseSeconds = r.integer('HEAP_RELEASE_SECONDS', 60, 0, 86_400);
  if (heapReleaseSeconds > 0 && heapReleaseSeconds < 10)
    r.problems.push(`HEAP_RELEASE_SECONDS="${heapReleaseSeconds}" must be 0 (never) or from 10 to 86400: each release pauses the process`);
  const config: AppConfig = {
    dataDir: path.resolve(cwd, r.string('DATA_DIR', './.data')),
    host: r.string('HOST', '0.0.0.0'),
    ports: {
      otlpHttp: r.port('OTLP_HTTP_PORT', 4318),
      otlpGrpc: r.port('OTLP_GRPC_PORT', 4317),
      api: r.port('API_PORT', 3000),
    },
    adminToken: r.secret('ADMIN_TOKEN', 16),
    keyPepper: r.secret('API_KEY_PEPPER', 16),
    databaseUrl: r.url('DATABASE_URL', ['postgres:', 'postgresql:']),
    clickhouse:
      server &&
      (clickhouseCluster === undefined
        ? server
        : { ...server, cluster: clickhouseCluster, maxClockOffsetMs: r.integer('CLICKHOUSE_MAX_CLOCK_OFFSET_MS', 10, 1, 1_000) }),
    clickhouseDatabase,
    redisUrl: r.url('REDIS_URL', ['redis:', 'rediss:']),
    otlpMaxBodyBytes: r.integer('OTLP_MAX_BODY_BYTES', 16 * MiB, 1024, 1024 * MiB),
    logLevel: r.oneOf('LOG_LEVEL', LOG_LEVELS, 'info'),
    queueMaxBacklog: r.integer('QUEUE_MAX_BACKLOG', 50_000, 1, 100_000_000),
    allowPrivateWebhooks: r.boolean('ALLOW_PRIVATE_WEBHOOKS', false),
    queryLimits: {
      maxExecutionSeconds: r.integer('QUERY_TIMEOUT_SECONDS', DEFAULT_QUERY_LIMITS.maxExecutionSeconds, 1, 3_600),
      maxMemoryBytes: r.integer('QUERY_MAX_MEMORY_MB', DEFAULT_QUERY_LIMITS.maxMemoryBytes / MiB, 16, 1_048_576) * MiB,
      maxRowsToRead: r.integer('QUERY_MAX_ROWS', DEFAULT_QUERY_LIMITS.maxRowsToRead, 1, 1_000_000_000_000),
      maxResultBytes: r.integer('QUERY_MAX_RESULT_MB', DEFAULT_QUERY_LIMITS.maxResultBytes / MiB, 1, 16_384) * MiB,
    },
    apiLimits: {
      requestsPerSecond: r.integer('API_REQUESTS_PER_SECOND', 100, 1, 1_000_000),
      concurrentRequests: r.integer('API_CONCURRENT_REQUESTS', 10, 1, 10_000),
    },
    clickhouseQuerySlots: r.integer('CLICKHOUSE_QUERY_SLOTS', 8, 1, 1_000),
    clickhouseExpressSharePercent: r.integer('CLICKHOUSE_EXPRESS_SHARE_PERCENT', 100, 1, 100),
    clickhouseConditionCacheMiB: r.integer('CLICKHOUSE_CONDITION_CACHE_MIB', DEFAULT_CONDITION_CACHE_MIB, 0, 1024),
    clickhouseMergeNice: r.integer('CLICKHOUSE_MERGE_NICE', DEFAULT_MERGE_NICE, 0, 19),
    metricsSeal: {
      afterSeconds: r.integer('METRICS_SEAL_AFTER_SECONDS', 120, 0, 86_400),
      intervalMs: r.integer('METRICS_SEAL_INTERVAL_MS', 10_000, 100, 3_600_000),
    },
    heapReleaseSeconds,
  };
  const ports = Object.entries(config.ports).filter(([, port]) => port !== 0);
  const taken = new Map<number, string>();
  for (const [name, port] of ports) {
    const other = taken.get(port);
    if (other) r.problems.push(`${portVariable(name)} and ${portVariable(other)} are both ${port}`);
    taken.set(port, name);
  }
  if (r.problems.length > 0) throw new ConfigError(r.problems);
  return config;
}

/** The environment variable that sets one of AppConfig's ports. */
export function portVariable(key: string): string {
  return { otlpHttp: 'OTLP_HTTP_PORT', otlpGrpc: 'OTLP_GRPC_PORT', api: 'API_PORT' }[key] ?? key;
}

export type Role = 'gateway' | 'worker' | 'api';

/**
 * A scaled-out role shares PostgreSQL and ClickHouse with its siblings, so it cannot fall back
 * to the embedded services (chDB binds one data directory to one process). Lists what is missing.
 */
export function assertExternalServices(config: AppConfig, role: Role): void {
  const missing: string[] = [];
  if (!config.databaseUrl) missing.push('DATABASE_URL (external PostgreSQL)');
  if (!config.clickhouse) missing.push('CLICKHOUSE_URL (ClickHouse server over HTTP)');
  if (!config.keyPepper) missing.push('API_KEY_PEPPER (the same secret on every process)');
  if (missing.length > 0) {
    throw new ConfigError([
      ...missing.map((m) => `the ${role} role needs ${m}`),
      'embedded services run only in the all-in-one server: use `npm start` for a single machine',
    ]);
  }
}

/** The one place that reads the configuration from process.env (setEngineAllocatorOptions and engineAllocatorOptions: one native library's variable). */
export function loadConfigFromEnvironment(): AppConfig {
  return loadConfig(process.env);
}

/**
 * The options of the embedded engine's memory allocator, to be called just before libchdb is
 * loaded: the one write to the environment, because they are a native library's, read by it once
 * when it is loaded. The engine allocates through jemalloc, compiled into libchdb, which keeps the
 * pages a statement freed resident until they decay: 5 s in chDB's build (which then purges them
 * at once: no "muzzy" stage). Under continuous ingest the engine frees insert-sized blocks several
 * times a second; a 1-s decay hands them back sooner than chDB's own, so fewer stay resident. A
 * shorter one trades CPU for memory: each page handed back is faulted in again by the next
 * statement that needs it (measured in docs/scaling.md, "Memory of the all-in-one"). An operator's
 * JE_MALLOC_CONF, even an empty one, is kept as it is.
 */
export function setEngineAllocatorOptions(): void {
  process.env.JE_MALLOC_CONF = engineAllocatorOptions();
}

/** The embedded engine allocator's options when the operator sets none (setEngineAllocatorOptions). */
export const DEFAULT_ENGINE_ALLOCATOR_OPTIONS = 'dirty_decay_ms:1000';

/** The options the embedded engine's allocator is given: the operator's JE_MALLOC_CONF, or the default (setEngineAllocatorOptions). */
export function engineAllocatorOptions(): string {
  return process.env.JE_MALLOC_CONF ?? DEFAULT_ENGINE_ALLOCATOR_OPTIONS;
}
