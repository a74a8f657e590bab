import type { IngestHarness } from './ingest-harness';

export interface TraceFigures {
  trace_id: string;
  duration_ms: number;
  iterations: number;
  input_tokens: number;
  output_tokens: number;
  cost_usd: number;
  error_count: number;
  llm_calls: number;
  session_id: string;
  root_name: string;
}

/** The API's figures of one trace (as in agent-trace.ts expectedTrace), from the traces rollup (merged across its rows). */
export async function traceFigures(h: IngestHarness, projectId: string, traceId: string): Promise<TraceFigures | undefined> {
  const [row] = await h.query<TraceFigures>(
    `SELECT trace_id,
            (toUnixTimestamp64Nano(end_time) - toUnixTimestamp64Nano(start_time)) / 1e6 AS duration_ms,
            if(isNotNull(stated), assumeNotNull(stated),
               if(agent_children > 0, agent_children, arrayCount(l -> l.3 = 0, llms))) AS iterations,
            arraySum(u.3) + arraySum(u.4) + arraySum(u.5) AS input_tokens,
            arraySum(u.6) + arraySum(u.7) AS output_tokens,
            arraySum(u.2) AS cost_usd,
            length(errors) AS error_count,
            length(llms) AS llm_calls,
            session_id, root_name
     FROM (
       SELECT trace_id, min(start_time) AS start_time, max(end_time) AS end_time,
              max(root_span_id) AS root, max(root_iterations) AS stated, max(root_name) AS root_name,
              groupUniqArrayArray(llm_spans) AS llms, groupUniqArrayArray(error_span_ids) AS errors,
              arrayCount(a -> a.2 = root, groupUniqArrayArray(agent_spans)) AS agent_children,
              maxMap(usage) AS u, max(session_id) AS session_id
       FROM traces
       WHERE project_id = {projectId:String} AND trace_id = {traceId:String}
       GROUP BY trace_id)`,
    { projectId, traceId },
  );
  return (
    row &&
    (Object.fromEntries(
      Object.entries(row).map(([k, v]) => [
        k,
        typeof v === 'string' && k !== 'trace_id' && k !== 'session_id' && k !== 'root_name' ? Number(v) : v,
      ]),
    ) as unknown as TraceFigures)
  );
}

export interface SessionFigures {
  trace_count: number;
  input_tokens: number;
  output_tokens: number;
  cost_usd: number;
}

export async function sessionFigures(h: IngestHarness, projectId: string, sessionId: string): Promise<SessionFigures | undefined> {
  const [row] = await h.query<Record<string, string | number>>(
    `SELECT length(groupUniqArrayArray(trace_ids)) AS trace_count, maxMap(usage) AS u,
            arraySum(u.3) + arraySum(u.4) + arraySum(u.5) AS input_tokens, arraySum(u.6) + arraySum(u.7) AS output_tokens, arraySum(u.2) AS cost_usd
     FROM sessions WHERE project_id = {projectId:String} AND session_id = {sessionId:String}
     GROUP BY session_id`,
    { projectId, sessionId },
  );
  return (
    row && {
      trace_count: Number(row.trace_count),
      input_tokens: Number(row.input_tokens),
      output_tokens: Number(row.output_tokens),
      cost_usd: Number(row.cost_usd),
    }
  );
}
