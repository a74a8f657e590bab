import { statementName, type ClickHouseClient } from '@spanforge/clickhouse';

/** A named statement of one project to fail once, as its process failing right before it would. */
export interface StatementFault {
  projectId: string;
  /** The statement's name (its `log_comment`, as `namedStatement` sets it). */
  statement: string;
  /** Set when it failed. */
  fired?: boolean;
}

/**
 * The project a statement is for: its `projectId` parameter, or on the embedded engine, where the
 * scheduled calls come with their values written in (inline-parameters.ts), the literal compared
 * with `project_id`.
 */
function projectOf(params: { query?: unknown; query_params?: unknown }): string | undefined {
  const bound = (params.query_params as { projectId?: string } | undefined)?.projectId;
  if (bound !== undefined) return bound;
  if (typeof params.query !== 'string') return undefined;
  // The first non-empty one: a settings clause's filters hold it quoted twice over (`''p''`), which reads as empty here.
  for (const match of params.query.matchAll(/project_id = '([^'\\]*)'/g)) if (match[1]) return match[1];
  return undefined;
}

/**
 * The fault seam of the integration suites: makes a ClickHouse client (the harness's, before its
 * workers start) fail each fault of the returned list once, when its statement runs for its
 * project: commands by their project (projectOf), inserts by their first row's `project_id`. The
 * failure is a refusal (code 36, BAD_ARGUMENTS), not a transient error a caller retries itself.
 * `what` says in the error what stops: "the round stops before", "the request stops at".
 */
export function failingStatements(clickhouse: ClickHouseClient, what: string): StatementFault[] {
  const faults: StatementFault[] = [];
  const failing = (name: string | undefined, projectId: unknown): void => {
    const fault = faults.find((f) => !f.fired && f.statement === name && f.projectId === projectId);
    if (!fault) return;
    fault.fired = true;
    throw Object.assign(new Error(`injected: ${what} ${name}`), { code: '36', type: 'BAD_ARGUMENTS' });
  };
  const { command, insert } = clickhouse;
  clickhouse.command = (async (params: Parameters<typeof command>[0]) => {
    failing(params.clickhouse_settings?.log_comment, projectOf(params));
    return command.call(clickhouse, params);
  }) as typeof command;
  clickhouse.insert = (async (params: Parameters<typeof insert>[0]) => {
    const values = params.values as Array<{ project_id?: string }>;
    failing(params.clickhouse_settings?.log_comment, Array.isArray(values) ? values[0]?.project_id : undefined);
    return insert.call(clickhouse, params);
  }) as typeof insert;
  return faults;
}

/**
 * The names of the reads (`query` calls, by their query id `name:uuid`) a client runs for one
 * project from now on, in order: which of several reads answered a request. `stop` unhooks it.
 */
export function recordedReads(clickhouse: ClickHouseClient, projectId: string): { names: string[]; stop: () => void } {
  const names: string[] = [];
  const { query } = clickhouse;
  clickhouse.query = ((params: Parameters<typeof query>[0]) => {
    if (projectOf(params) === projectId) names.push(statementName(params));
    return query.call(clickhouse, params);
  }) as typeof query;
  return {
    names,
    stop: () => {
      clickhouse.query = query;
    },
  };
}
