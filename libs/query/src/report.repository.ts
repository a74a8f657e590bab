import type { ScopedClickHouse } from './scoped-clickhouse';

export interface WindowTotalsRow {
  cost_usd: number;
  input_tokens: number;
  output_tokens: number;
  trace_count: number;
  span_count: number;
}

export interface TopTraceRow {
  trace_id: string;
  root_name: string;
  cost_usd: number;
  duration_ms: number;
  start_time: string;
}

/** The window-level figures of a cost report (traces starting in [from, to)). */
export class ReportRepository {
  constructor(private readonly db: ScopedClickHouse) {}

  async totals(fromMs: number, toMs: number): Promise<WindowTotalsRow> {
    const [row] = await this.db.rows<WindowTotalsRow>(
      'report.totals',
      `SELECT sum(cost_usd) AS cost_usd, sum(input_tokens) AS input_tokens, sum(output_tokens) AS output_tokens, count() AS trace_count,
              sum(arraySum(arrayMap(r -> r.spans, cost_rows))) AS span_count
       FROM trace_figures FINAL
       WHERE tenant_id = {tenantId:String} AND project_id = {projectId:String}
         AND start_time >= fromUnixTimestamp64Milli({fromMs:Int64}, 'UTC') AND start_time < fromUnixTimestamp64Milli({toMs:Int64}, 'UTC')`,
      { fromMs, toMs },
    );
    return row ?? { cost_usd: 0, input_tokens: 0, output_tokens: 0, trace_count: 0, span_count: 0 };
  }

  topTraces(fromMs: number, toMs: number, limit: number): Promise<TopTraceRow[]> {
    return this.db.rows<TopTraceRow>(
      'report.top_traces',
      `SELECT trace_id, root_name, cost_usd, duration_ms, start_time FROM trace_figures FINAL
       WHERE tenant_id = {tenantId:String} AND project_id = {projectId:String}
         AND start_time >= fromUnixTimestamp64Milli({fromMs:Int64}, 'UTC') AND start_time < fromUnixTimestamp64Milli({toMs:Int64}, 'UTC')
       ORDER BY cost_usd DESC, trace_id LIMIT {limit:UInt32}`,
      { fromMs, toMs, limit },
    );
  }
}
