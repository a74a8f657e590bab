import { randomUUID } from 'node:crypto';
import { projectTableFilters, scheduledCall, stringLiteral, type ClickHouseClient, type FairScheduler } from '@spanforge/clickhouse';
import { DEFAULT_QUERY_LIMITS, type QueryLimits } from '@spanforge/config';
import { DomainError, ErrorCode } from '@spanforge/errors';

/** Whose data a query may read: one project of one tenant. */
export interface QueryScope {
  tenantId: string;
  projectId: string;
}

/**
 * The start of what a project keeps, in ms since the epoch (now minus its `retentionDays`), or
 * undefined when it keeps everything: rows older than that are left out of every statement.
 */
export type KeptSince = (projectId: string) => Promise<number | undefined> | number | undefined;

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
 * The only way the query API reaches ClickHouse, for one project. Scoped by construction: every
 * statement carries the engine-side filter of each project table (`additional_table_filters`,
 * libs/clickhouse/src/project-tables.ts), so it can read no other project's rows, nothing past the
 * project's retention and nothing of an erased trace, whatever its text; the statements' own `tenant_id = {tenantId:String} AND project_id = {projectId:String}`
 * are bound here too (they pick the primary key range). Every statement is named (query_id and
 * log_comment) and runs under the per-query limits.
 *
 * Limits and output settings go in the statement's own SETTINGS clause, not in the client's
 * `clickhouse_settings`: embedded chDB applies those with SET on the connection's session, where they would
 * stay in force for every later statement of the process (the worker's upkeep among them).
 */
export class ScopedClickHouse {
  private readonly limits: string;
  /** The project's table filters without a retention (made here, so a bad scope fails at once). */
  private readonly projectFilters: string;
  private readonly maxResultBytes: number;

  constructor(
    private readonly client: ClickHouseClient,
    readonly scope: QueryScope,
    limits: QueryLimits = DEFAULT_QUERY_LIMITS,
    /** The process's share of ClickHouse between projects (FairScheduler); without one, statements run as they come. */
    private readonly scheduler?: FairScheduler,
    /** The project's retention; without it, every stored row is answered. */
    private readonly keptSince?: KeptSince,
  ) {
    this.limits = settingsClause(limits);
    this.projectFilters = projectTableFilters(scope, undefined, { erasures: true });
    this.maxResultBytes = limits.maxResultBytes;
  }

  /** The start of what the project keeps (ms), or undefined when it keeps everything: rows older are never answered. */
  async keptSinceMs(): Promise<number | undefined> {
    return this.keptSince?.(this.scope.projectId);
  }

  async rows<T>(name: string, sql: string, params: Record<string, unknown> = {}): Promise<T[]> {
    const keptSince = await this.keptSinceMs();
    const settings = `${this.limits}, ${keptSince === undefined ? this.projectFilters : projectTableFilters(this.scope, keptSince, { erasures: true })}`;
    const asked = {
      query: `${sql}\n${settings}, log_comment = ${stringLiteral(name)}`,
      query_params: { ...params, tenantId: this.scope.tenantId, projectId: this.scope.projectId },
      format: 'JSONEachRow' as const,
      query_id: `${name}:${randomUUID()}`,
    };
    // On the embedded engine its values are written in here, once (scheduledCall): the express lane needs to know whether chDB binds it.
    const { params: call, bound } = this.scheduler ? scheduledCall(this.scheduler, asked) : { params: asked, bound: true };
    const read = async () => {
      const result = await this.client.query(call);
      // The answer is refused before it is parsed when it is over the limit (its objects would take several times the text).
      const text = await result.text();
      if (text.length > this.maxResultBytes)
        throw new DomainError(
          ErrorCode.QUERY_TOO_EXPENSIVE,
          `query ${name} answers more than ${Math.round(this.maxResultBytes / 2 ** 20)} MB; narrow the time range or filters, or ask for fewer fields or rows`,
        );
      return parseEachRow<T>(text);
    };
    try {
      return await (this.scheduler ? this.scheduler.run(this.scope.projectId, read, { name, bound }) : read());
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

/** JSONEachRow text: one JSON object a line. */
function parseEachRow<T>(text: string): T[] {
  const rows: T[] = [];
  let start = 0;
  while (start < text.length) {
    let end = text.indexOf('\n', start);
    if (end === -1) end = text.length;
    if (end > start) rows.push(JSON.parse(text.slice(start, end)) as T);
    start = end + 1;
  }
  return rows;
}
