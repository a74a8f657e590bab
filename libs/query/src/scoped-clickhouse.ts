import { randomUUID } from 'node:crypto';
import type { ClickHouseClient, FairScheduler } from '@spanforge/clickhouse';
import { DEFAULT_QUERY_LIMITS, type QueryLimits } from '@spanforge/config';
import { DomainError, ErrorCode } from '@spanforge/errors';

/** Whose data a query may read: one project of one tenant. */
export interface QueryScope {
  tenantId: string;
  projectId: string;
}

/** ClickHouse error codes that mean "this query asks too much", not "the server is broken". */
const TOO_EXPENSIVE = new Set([
  'TIMEOUT_EXCEEDED',
  'MEMORY_LIMIT_EXCEEDED',
  'TOO_MANY_ROWS',
  'TOO_MANY_BYTES',
  'TOO_MANY_ROWS_OR_BYTES',
  'QUERY_WAS_CANCELLED',
]);

/**
 * The only way the query API reaches ClickHouse. It refuses SQL that does not filter on the
 * scope's tenant and project placeholders, binds those (and every other value) as parameters, tags
 * each query with its name (query_id and log_comment) and applies the per-query limits.
 *
 * Limits and output settings go in the statement's own SETTINGS clause, not in the client's
 * `clickhouse_settings`: embedded chDB applies those with SET on its one session, where they would
 * stay in force for every later statement of the process (the worker's upkeep among them).
 */
export class ScopedClickHouse {
  private readonly settings: string;

  constructor(
    private readonly client: ClickHouseClient,
    readonly scope: QueryScope,
    limits: QueryLimits = DEFAULT_QUERY_LIMITS,
    /** The process's turns between projects (FairScheduler); without one, statements run as they come. */
    private readonly scheduler?: FairScheduler,
  ) {
    this.settings = settingsClause(limits);
  }

  async rows<T>(name: string, sql: string, params: Record<string, unknown> = {}): Promise<T[]> {
    if (!sql.includes('tenant_id = {tenantId:String}') || !sql.includes('project_id = {projectId:String}')) {
      throw new Error(`query ${name} is not scoped to a tenant and project`);
    }
    const read = async () => {
      const result = await this.client.query({
        query: `${sql}\n${this.settings}, log_comment = ${stringLiteral(name)}`,
        query_params: { ...params, tenantId: this.scope.tenantId, projectId: this.scope.projectId },
        format: 'JSONEachRow',
        query_id: `${name}:${randomUUID()}`,
      });
      return await result.json<T>();
    };
    try {
      return await (this.scheduler ? this.scheduler.run(this.scope.projectId, read) : read());
    } catch (error) {
      const type = (error as { type?: string }).type ?? '';
      if (TOO_EXPENSIVE.has(type))
        throw new DomainError(
          ErrorCode.QUERY_TOO_EXPENSIVE,
          `query ${name} needs more than its limits allow; narrow the time range or filters`,
        );
      throw error;
    }
  }
}

/** The SETTINGS clause every scoped query ends with (before the client's FORMAT). */
function settingsClause(limits: QueryLimits): string {
  const integer = (name: string, value: number) => {
    if (!Number.isSafeInteger(value) || value <= 0) throw new Error(`query limit ${name} must be a positive integer, got ${value}`);
    return `${name} = ${value}`;
  };
  return `SETTINGS ${[
    integer('max_execution_time', limits.maxExecutionSeconds),
    integer('max_memory_usage', limits.maxMemoryBytes),
    integer('max_rows_to_read', limits.maxRowsToRead),
    // Integers beyond 2^53 arrive as strings in JSON; we read counts and sums as numbers.
    'output_format_json_quote_64bit_integers = 0',
  ].join(', ')}`;
}

/** A ClickHouse string literal ('' doubles a quote, backslashes are escaped). */
function stringLiteral(text: string): string {
  return `'${text.replace(/\\/g, '\\\\').replace(/'/g, "''")}'`;
}
