import path from 'node:path';
import {
  ConfigError,
  DEFAULT_QUERY_LIMITS,
  assertExternalServices,
  engineAllocatorOptions,
  loadConfig,
  setEngineAllocatorOptions,
} from './config';

function problemsOf(env: Record<string, string>): string[] {
  try {
    loadConfig(env, '/srv/app');
  } catch (error) {
    if (error instanceof ConfigError) return error.problems;
    throw error;
  }
  return [];
}

describe('loadConfig', () => {
  it('uses the contract defaults when nothing is set', () => {
    const config = loadConfig({}, '/srv/app');
    expect(config.dataDir).toBe(path.resolve('/srv/app', '.data'));
    expect(config.ports).toEqual({ otlpHttp: 4318, otlpGrpc: 4317, api: 3000 });
    expect(config.otlpMaxBodyBytes).toBe(16 * 1024 * 1024);
    expect(config.databaseUrl).toBeUndefined();
    expect(config.clickhouse).toBeUndefined();
    expect(config.redisUrl).toBeUndefined();
  });

  it('reads external services and their credentials', () => {
    const config = loadConfig(
      {
        DATABASE_URL: 'postgres://u:p@db:5432/app',
        CLICKHOUSE_URL: 'https://ch.example:8443',
        CLICKHOUSE_USER: 'ingest',
        CLICKHOUSE_PASSWORD: 'pw',
        CLICKHOUSE_DATABASE: 'obs',
        REDIS_URL: 'redis://cache:6379',
        DATA_DIR: '/var/lib/spanforge',
      },
      '/srv/app',
    );
    expect(config.clickhouse).toEqual({ url: 'https://ch.example:8443', username: 'ingest', password: 'pw', database: 'obs' });
    expect(config.databaseUrl).toBe('postgres://u:p@db:5432/app');
    expect(config.redisUrl).toBe('redis://cache:6379');
    expect(config.dataDir).toBe('/var/lib/spanforge');
  });

  it('reads the cluster a ClickHouse server is part of, which only a server can be', () => {
    const server = { CLICKHOUSE_URL: 'https://ch.example:8443' };
    expect(loadConfig(server, '/srv/app').clickhouse?.cluster).toBeUndefined();
    expect(loadConfig({ ...server, CLICKHOUSE_CLUSTER: ' ' }, '/srv/app').clickhouse?.cluster).toBeUndefined();
    expect(loadConfig({ ...server, CLICKHOUSE_CLUSTER: 'obs_cluster' }, '/srv/app').clickhouse?.cluster).toBe('obs_cluster');
    // Two servers' clocks may differ by 10 ms unless told otherwise (only a cluster has several).
    expect(loadConfig({ ...server, CLICKHOUSE_CLUSTER: 'obs_cluster' }, '/srv/app').clickhouse?.maxClockOffsetMs).toBe(10);
    expect(
      loadConfig({ ...server, CLICKHOUSE_CLUSTER: 'obs_cluster', CLICKHOUSE_MAX_CLOCK_OFFSET_MS: '4' }, '/srv/app').clickhouse
        ?.maxClockOffsetMs,
    ).toBe(4);
    expect(loadConfig({ ...server, CLICKHOUSE_MAX_CLOCK_OFFSET_MS: '4' }, '/srv/app').clickhouse?.maxClockOffsetMs).toBeUndefined();
    expect(problemsOf({ CLICKHOUSE_CLUSTER: 'obs_cluster' })).toEqual(['CLICKHOUSE_CLUSTER needs CLICKHOUSE_URL (a cluster is a server)']);
    expect(problemsOf({ ...server, CLICKHOUSE_CLUSTER: 'a b' })).toEqual([
      'CLICKHOUSE_CLUSTER="a b" must be a plain identifier (letters, digits, underscore)',
    ]);
  });

  it('reads the per-query ClickHouse limits of the API', () => {
    expect(loadConfig({}, '/srv/app').queryLimits).toEqual(DEFAULT_QUERY_LIMITS);
    expect(DEFAULT_QUERY_LIMITS).toEqual({
      maxExecutionSeconds: 10,
      maxMemoryBytes: 2 * 1024 ** 3,
      maxRowsToRead: 2_000_000_000,
      maxResultBytes: 256 * 1024 ** 2,
    });
    expect(
      loadConfig(
        { QUERY_TIMEOUT_SECONDS: '30', QUERY_MAX_MEMORY_MB: '512', QUERY_MAX_ROWS: '50000000', QUERY_MAX_RESULT_MB: '8' },
        '/srv/app',
      ).queryLimits,
    ).toEqual({
      maxExecutionSeconds: 30,
      maxMemoryBytes: 512 * 1024 ** 2,
      maxRowsToRead: 50_000_000,
      maxResultBytes: 8 * 1024 ** 2,
    });
    expect(problemsOf({ QUERY_TIMEOUT_SECONDS: '0', QUERY_MAX_MEMORY_MB: 'lots', QUERY_MAX_ROWS: '-5', QUERY_MAX_RESULT_MB: '0' })).toEqual(
      [
        'QUERY_TIMEOUT_SECONDS="0" must be an integer from 1 to 3600',
        'QUERY_MAX_MEMORY_MB="lots" must be an integer from 16 to 1048576',
        'QUERY_MAX_ROWS="-5" must be an integer from 1 to 1000000000000',
        'QUERY_MAX_RESULT_MB="0" must be an integer from 1 to 16384',
      ],
    );
  });

  it('reads how often the heap release runs: 0 (never), or at least every 10 s', () => {
    expect(loadConfig({}, '/srv/app').heapReleaseSeconds).toBe(60);
    expect(loadConfig({ HEAP_RELEASE_SECONDS: '0' }, '/srv/app').heapReleaseSeconds).toBe(0);
    expect(loadConfig({ HEAP_RELEASE_SECONDS: '300' }, '/srv/app').heapReleaseSeconds).toBe(300);
    expect(problemsOf({ HEAP_RELEASE_SECONDS: '5' })).toEqual([
      'HEAP_RELEASE_SECONDS="5" must be 0 (never) or from 10 to 86400: each release pauses the process',
    ]);
    expect(problemsOf({ HEAP_RELEASE_SECONDS: '-1' })).toEqual(['HEAP_RELEASE_SECONDS="-1" must be an integer from 0 to 86400']);
  });

  it("reads the size of the embedded engine's query condition cache: 2 MiB unless told, 0 for none", () => {
    expect(loadConfig({}, '/srv/app').clickhouseConditionCacheMiB).toBe(2);
    expect(loadConfig({ CLICKHOUSE_CONDITION_CACHE_MIB: '0' }, '/srv/app').clickhouseConditionCacheMiB).toBe(0);
    expect(loadConfig({ CLICKHOUSE_CONDITION_CACHE_MIB: '64' }, '/srv/app').clickhouseConditionCacheMiB).toBe(64);
    expect(problemsOf({ CLICKHOUSE_CONDITION_CACHE_MIB: '2.5' })).toEqual([
      'CLICKHOUSE_CONDITION_CACHE_MIB="2.5" must be an integer from 0 to 1024',
    ]);
  });

  it("reads the nice value of the embedded engine's merges: 19 unless told, from 0 to 19", () => {
    expect(loadConfig({}, '/srv/app').clickhouseMergeNice).toBe(19);
    expect(loadConfig({ CLICKHOUSE_MERGE_NICE: '0' }, '/srv/app').clickhouseMergeNice).toBe(0);
    expect(problemsOf({ CLICKHOUSE_MERGE_NICE: '20' })).toEqual(['CLICKHOUSE_MERGE_NICE="20" must be an integer from 0 to 19']);
    expect(problemsOf({ CLICKHOUSE_MERGE_NICE: '-5' })).toEqual(['CLICKHOUSE_MERGE_NICE="-5" must be an integer from 0 to 19']);
  });

  it('lists every bad variable in one error', () => {
    const problems = problemsOf({
      OTLP_HTTP_PORT: 'http',
      API_PORT: '70000',
      DATABASE_URL: 'mysql://root:hunter2@db/app',
      CLICKHOUSE_URL: 'not a url',
      REDIS_URL: 'http://cache',
      OTLP_MAX_BODY_BYTES: '-5',
      ADMIN_TOKEN: 'short',
      LOG_LEVEL: 'loud',
      CLICKHOUSE_DATABASE: 'obs; DROP',
      ALLOW_PRIVATE_WEBHOOKS: 'maybe',
    });
    const named = [
      'OTLP_HTTP_PORT',
      'API_PORT',
      'DATABASE_URL',
      'CLICKHOUSE_URL',
      'REDIS_URL',
      'OTLP_MAX_BODY_BYTES',
      'ADMIN_TOKEN',
      'LOG_LEVEL',
      'CLICKHOUSE_DATABASE',
      'ALLOW_PRIVATE_WEBHOOKS',
    ];
    expect(problems).toHaveLength(named.length);
    for (const variable of named) expect(problems.some((p) => p.startsWith(variable))).toBe(true);
  });

  it('never echoes a URL that may carry a password', () => {
    const problems = problemsOf({ DATABASE_URL: 'mysql://root:hunter2@db/app', CLICKHOUSE_URL: 'x:hunter2@' });
    expect(problems.join('\n')).not.toContain('hunter2');
  });

  it('refuses two listeners on one port', () => {
    expect(problemsOf({ API_PORT: '4318' })).toEqual(['API_PORT and OTLP_HTTP_PORT are both 4318']);
  });

  it('keeps the message readable', () => {
    expect(() => loadConfig({ API_PORT: 'x', OTLP_GRPC_PORT: 'y' })).toThrow(/\(2 problems\):\n {2}- OTLP_GRPC_PORT.*\n {2}- API_PORT/);
  });
});

describe('assertExternalServices', () => {
  it('names what a scaled-out role is missing', () => {
    const config = loadConfig({ DATABASE_URL: 'postgres://db/app' });
    expect(() => assertExternalServices(config, 'gateway')).toThrow(/gateway role needs CLICKHOUSE_URL[\s\S]*API_KEY_PEPPER/);
  });

  it('passes with every external service set', () => {
    const config = loadConfig({ DATABASE_URL: 'postgres://db/app', CLICKHOUSE_URL: 'http://ch:8123', API_KEY_PEPPER: 'p'.repeat(32) });
    expect(() => assertExternalServices(config, 'worker')).not.toThrow();
  });
});

describe('setEngineAllocatorOptions', () => {
  const before = process.env.JE_MALLOC_CONF;
  afterEach(() => {
    if (before === undefined) delete process.env.JE_MALLOC_CONF;
    else process.env.JE_MALLOC_CONF = before;
  });

  it('sets a 1-s decay of freed pages when the operator set nothing', () => {
    delete process.env.JE_MALLOC_CONF;
    setEngineAllocatorOptions();
    expect(process.env.JE_MALLOC_CONF).toBe('dirty_decay_ms:1000');
  });

  it("keeps the operator's options, an empty value included (chDB's own settings)", () => {
    for (const operators of ['dirty_decay_ms:0,narenas:1', '']) {
      process.env.JE_MALLOC_CONF = operators;
      setEngineAllocatorOptions();
      expect(process.env.JE_MALLOC_CONF).toBe(operators);
    }
  });

  it('are the options engineAllocatorOptions reports, before and after they are set', () => {
    delete process.env.JE_MALLOC_CONF;
    expect(engineAllocatorOptions()).toBe('dirty_decay_ms:1000');
    setEngineAllocatorOptions();
    expect(engineAllocatorOptions()).toBe('dirty_decay_ms:1000');
    process.env.JE_MALLOC_CONF = 'dirty_decay_ms:250';
    expect(engineAllocatorOptions()).toBe('dirty_decay_ms:250');
  });
});
