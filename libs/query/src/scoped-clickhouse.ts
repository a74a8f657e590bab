import { randomUUID } from 'node:crypto';
import type { ClickHouseClient } from '@spanforge/clickhouse';
import { DomainError, ErrorCode } from '@spanforge/errors';

/** Whose data a query may read: one project of one tenant. */
export interface QueryScope {
  tenantId: string;
  projectId: string;
}

/** Per-query ClickHouse limits: a query that would need more is refused as QUERY_TOO_EXPENSIVE. */
export interface QueryLimits {
  maxExecutionSeconds: number;
  maxMemoryBytes: number;
  maxRowsToRead: number;
}

export const DEFAULT_QUERY_LIMITS: QueryLimits = {
  maxExecutionSeconds: 10,
  maxMemoryBytes: 2 * 1024 ** 3,
  maxRowsToRead: 2_000_000_000,
};

/** ClickHouse error codes that mean "this query asks too much", not "the server is broken". */
const TOO_EXPENSIVE = new Set(['TIMEOUT_EXCEEDED', 'MEMORY_LIMIT_EXCEEDED', 'TOO_MANY_ROWS', 'TOO_MANY_BYTES', 'TOO_MANY_ROWS_OR_BYTES', 'QUERY_WAS_CANCELLED']);

/**
 * The only way the query API reaches ClickHouse. It refuses SQL that does not filter on the
 * scope's tenant and project placeholders, binds those (and every other value) as parameters, tags
 * each query with its name (query_id and log_comment) and applies the per-query limits.
 */
export class ScopedClickHouse {
  constructor(
    private readonly client: ClickHouseClient,
    readonly scope: QueryScope,
    private readonly limits: QueryLimits = DEFAULT_QUERY_LIMITS,
  ) {}

  async rows<T>(name: string, sql: string, params: Record<string, unknown> = {}): Promise<T[]> {
    if (!sql.includes('tenant_id = {tenantId:String}') || !sql.includes('project_id = {projectId:String}')) {
      throw new Error(`query ${name} is not scoped to a tenant and project`);
    }
    try {
      const result = await this.client.query({
        query: sql,
        query_params: { ...params, tenantId: this.scope.tenantId, projectId: this.scope.projectId },
        format: 'JSONEachRow',
        query_id: `${name}:${randomUUID()}`,
        clickhouse_settings: {
          log_comment: name,
          max_execution_time: this.limits.maxExecutionSeconds,
          max_memory_usage: String(this.limits.maxMemoryBytes),
          max_rows_to_read: String(this.limits.maxRowsToRead),
          // Integers beyond 2^53 arrive as strings in JSON; we read counts and sums as numbers.
          output_format_json_quote_64bit_integers: 0,
        },
      });
      return await result.json<T>();
    } catch (error) {
      const type = (error as { type?: string }).type ?? '';
      if (TOO_EXPENSIVE.has(type)) throw new DomainError(ErrorCode.QUERY_TOO_EXPENSIVE, `query ${name} needs more than its limits allow; narrow the time range or filters`);
      throw error;
    }
  }
}
