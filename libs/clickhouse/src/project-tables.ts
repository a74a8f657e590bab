/**
 * Every table that holds project data (each has `tenant_id` and `project_id` columns). A scoped
 * statement hands ClickHouse a filter for each of them (`projectTableFilters`), so whatever the
 * statement's text, a read of any of these tables — in a join, a subquery, a CTE, with FINAL —
 * sees only the scope's rows. `project-tables.int-spec.ts` checks this list against the tables
 * the migrations create: a new table of project data fails it until it is added here.
 */
export const PROJECT_TABLES = [
  'cost_daily',
  'dead_letters',
  'feedback',
  'ingest_accounting',
  'runs',
  'session_figures',
  'sessions',
  'span_facts',
  'span_log_events',
  'span_metrics_hour',
  'span_metrics_minute',
  'span_minute_dirt',
  'span_minute_marks',
  'spans',
  'trace_cost_days',
  'trace_figures',
  'trace_index',
  'traces',
] as const;

/** Tenant and project ids are UUIDs or slugs; anything else is refused before it reaches SQL text. */
const SCOPE_ID = /^[A-Za-z0-9_-]{1,64}$/;

/**
 * The `additional_table_filters` setting that confines every read of a project table to one
 * project: the engine adds `tenant_id = … AND project_id = …` to each read of each table.
 */
export function projectTableFilters(scope: { tenantId: string; projectId: string }): string {
  for (const id of [scope.tenantId, scope.projectId]) {
    if (!SCOPE_ID.test(id)) throw new Error(`not a tenant or project id: ${JSON.stringify(id)}`);
  }
  const filter = stringLiteral(`tenant_id = ${stringLiteral(scope.tenantId)} AND project_id = ${stringLiteral(scope.projectId)}`);
  return `additional_table_filters = {${PROJECT_TABLES.map((table) => `${stringLiteral(table)}: ${filter}`).join(', ')}}`;
}

/** A ClickHouse string literal ('' doubles a quote, backslashes are escaped). */
export function stringLiteral(text: string): string {
  return `'${text.replace(/\\/g, '\\\\').replace(/'/g, "''")}'`;
}
