import type { ScopedClickHouse } from './scoped-clickhouse';

export interface FeedbackRow {
  name: string;
  data_type: 'NUMERIC' | 'BOOLEAN' | 'CATEGORICAL' | 'TEXT';
  value_number: number | null;
  value_text: string;
  comment: string;
}

export interface SessionFeedbackRow {
  session_id: string;
  name: string;
  count: number;
  avg: number | null;
}

/** Reads of feedback (each client id once: FINAL), by trace and by session. */
export class FeedbackReadRepository {
  constructor(private readonly db: ScopedClickHouse) {}

  traceFeedback(traceId: string): Promise<FeedbackRow[]> {
    return this.db.rows<FeedbackRow>(
      'query.trace_feedback',
      `SELECT name, toString(data_type) AS data_type, value_number, value_text, comment FROM feedback FINAL
       WHERE tenant_id = {tenantId:String} AND project_id = {projectId:String} AND trace_id = {traceId:String}
       ORDER BY received_at, id`,
      { traceId },
    );
  }

  /** Per session and score name: how many scores and their mean (NUMERIC and BOOLEAN as 1/0; null for text). */
  sessionFeedback(sessionIds: string[]): Promise<SessionFeedbackRow[]> {
    if (sessionIds.length === 0) return Promise.resolve([]);
    return this.db.rows<SessionFeedbackRow>(
      'query.session_feedback',
      `SELECT t.session_id AS session_id, f.name AS name, count() AS count, avg(f.value_number) AS avg
       FROM (SELECT trace_id, name, value_number FROM feedback FINAL WHERE tenant_id = {tenantId:String} AND project_id = {projectId:String}) AS f
       INNER JOIN (SELECT trace_id, session_id FROM trace_figures FINAL
                   WHERE tenant_id = {tenantId:String} AND project_id = {projectId:String} AND session_id IN {sessionIds:Array(String)}) AS t
       ON f.trace_id = t.trace_id
       GROUP BY session_id, name ORDER BY session_id, name`,
      { sessionIds },
    );
  }
}
