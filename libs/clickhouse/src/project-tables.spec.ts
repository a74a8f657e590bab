import { ERASED_BY, PROJECT_TABLES, RETAINED_SINCE, projectTableFilters } from './project-tables';

const scope = { tenantId: 't1', projectId: 'p1' };

/** Each table's filter, from the setting's text. */
function filters(setting: string): Record<string, string> {
  const body = /^additional_table_filters = \{(.*)\}$/.exec(setting)![1]!;
  const entries = [...body.matchAll(/'(\w+)': '((?:[^']|'')*)'/g)];
  return Object.fromEntries(entries.map(([, table, filter]) => [table!, filter!.replace(/''/g, "'")]));
}

describe('projectTableFilters', () => {
  it("confines every project table to the scope's project", () => {
    const all = filters(projectTableFilters(scope));
    expect(Object.keys(all).sort()).toEqual([...PROJECT_TABLES].sort());
    for (const filter of Object.values(all)) expect(filter).toBe("tenant_id = 't1' AND project_id = 'p1'");
  });

  it('leaves out what the retention no longer keeps, each table by its own time and grain', () => {
    const since = Date.UTC(2026, 10, 1, 13, 47, 21, 500);
    const instant = (ms: number) => `fromUnixTimestamp64Milli(toInt64(${ms}), 'UTC')`;
    const all = filters(projectTableFilters(scope, since));
    expect(all.spans).toBe(`tenant_id = 't1' AND project_id = 'p1' AND start_time >= ${instant(since)}`);
    expect(all.span_metrics_minute).toContain(`minute >= ${instant(Date.UTC(2026, 10, 1, 13, 47))}`);
    expect(all.span_metrics_hour).toContain(`hour >= ${instant(Date.UTC(2026, 10, 1, 13))}`);
    expect(all.cost_daily).toContain(`day >= toDate(${instant(Date.UTC(2026, 10, 1))})`);
    // Usage metering and the sealer's bookkeeping are not project content under retention.
    for (const table of PROJECT_TABLES.filter((t) => RETAINED_SINCE[t] === null))
      expect(all[table]).toBe("tenant_id = 't1' AND project_id = 'p1'");
    for (const table of PROJECT_TABLES.filter((t) => RETAINED_SINCE[t] !== null)) expect(all[table]).toMatch(/ AND \w+ >= /);
  });

  it("leaves out erased traces and whole erased sessions, by the project's own tombstones", () => {
    const all = filters(projectTableFilters(scope, undefined, { erasures: true }));
    const tombstones = "erased_traces WHERE tenant_id = 't1' AND project_id = 'p1'";
    // Guarded by the count of tombstones: a project that erased nothing does not read trace ids.
    expect(all.spans).toBe(
      `tenant_id = 't1' AND project_id = 'p1' AND ((SELECT count() FROM ${tombstones}) = 0 OR trace_id NOT IN (SELECT trace_id FROM ${tombstones}))`,
    );
    const wholeSessions = `${tombstones} AND whole_session = 1`;
    expect(all.session_figures).toBe(
      `tenant_id = 't1' AND project_id = 'p1' AND ((SELECT count() FROM ${wholeSessions}) = 0 OR session_id NOT IN (SELECT session_id FROM ${wholeSessions}))`,
    );
    for (const table of PROJECT_TABLES.filter((t) => ERASED_BY[t] === undefined))
      expect(all[table]).toBe("tenant_id = 't1' AND project_id = 'p1'");
  });

  it('refuses ids and times that are not', () => {
    expect(() => projectTableFilters({ tenantId: "t' OR 1", projectId: 'p' })).toThrow(/not a tenant or project id/);
    expect(() => projectTableFilters(scope, 1.5)).toThrow(/not a time in milliseconds/);
  });
});
