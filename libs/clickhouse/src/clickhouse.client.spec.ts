import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createClient } from '@clickhouse/client';
import { clickHouseTarget, describeTarget, embeddedEngineArguments, serverClientOptions } from './clickhouse.client';

describe('serverClientOptions', () => {
  const server = { kind: 'server', url: 'http://127.0.0.1:1', username: 'ingest', password: 'pw', database: 'obs' } as const;

  it('sets no statement settings on a single server', () => {
    expect(serverClientOptions(server).clickhouse_settings).toBeUndefined();
    expect(describeTarget(server)).toBe('ClickHouse server http://127.0.0.1:1 database obs');
  });

  it('says at start-up that the server is a cluster', () => {
    expect(describeTarget({ ...server, cluster: 'obs_cluster', maxClockOffsetMs: 10 })).toBe(
      'ClickHouse server http://127.0.0.1:1 database obs (cluster obs_cluster: quorum inserts, first healthy replica)',
    );
  });

  describe('on a cluster', () => {
    let http: Server;
    const requested: URL[] = [];
    beforeAll(async () => {
      // Stands in for ClickHouse: records each statement's URL and answers an empty result.
      http = createServer((request, response) => {
        requested.push(new URL(request.url ?? '/', 'http://localhost'));
        request.resume();
        request.on('end', () => response.writeHead(200, { 'X-ClickHouse-Summary': '{}' }).end());
      });
      await new Promise<void>((resolve) => http.listen(0, '127.0.0.1', resolve));
    });
    afterAll(() => new Promise<void>((resolve) => http.close(() => resolve())));

    it("sends the consistency settings with every statement, next to the statement's own", async () => {
      const { port } = http.address() as AddressInfo;
      const client = createClient(
        serverClientOptions({ ...server, url: `http://127.0.0.1:${port}`, cluster: 'obs_cluster', maxClockOffsetMs: 10 }),
      );
      try {
        await client.command({ query: 'INSERT INTO spans SELECT 1', clickhouse_settings: { max_execution_time: 10 } });
        await client.command({ query: 'SELECT 1' });
      } finally {
        await client.close();
      }

      expect(requested).toHaveLength(2);
      for (const url of requested) {
        expect(url.searchParams.get('insert_distributed_sync')).toBe('1');
        expect(url.searchParams.get('insert_quorum')).toBe('auto');
        expect(url.searchParams.get('load_balancing')).toBe('first_or_random');
      }
      expect(requested[0]!.searchParams.get('max_execution_time')).toBe('10');
    });
  });
});

describe('the embedded engine', () => {
  it("starts with the configured query condition cache size, in bytes, and the merges' nice value", () => {
    expect(embeddedEngineArguments({ conditionCacheMiB: 2, mergeNice: 19 })).toEqual([
      '--query_condition_cache_size=2097152',
      '--os_threads_nice_value_merge_mutate=19',
    ]);
    expect(embeddedEngineArguments({ conditionCacheMiB: 0, mergeNice: 0 })).toEqual([
      '--query_condition_cache_size=0',
      '--os_threads_nice_value_merge_mutate=0',
    ]);
    expect(() => embeddedEngineArguments({ conditionCacheMiB: -1, mergeNice: 19 })).toThrow(RangeError);
    expect(() => embeddedEngineArguments({ conditionCacheMiB: 0.5, mergeNice: 19 })).toThrow('whole number of MiB');
    expect(() => embeddedEngineArguments({ conditionCacheMiB: 2, mergeNice: 20 })).toThrow('from 0 to 19');
    expect(() => embeddedEngineArguments({ conditionCacheMiB: 2, mergeNice: -1 })).toThrow(RangeError);
  });

  it("takes the cache's size and the merges' nice value from the configuration, under the data directory", () => {
    expect(clickHouseTarget({ dataDir: '/srv/data', clickhouseConditionCacheMiB: 8, clickhouseMergeNice: 10 })).toEqual({
      kind: 'embedded',
      path: '/srv/data/clickhouse',
      conditionCacheMiB: 8,
      mergeNice: 10,
    });
  });
});
