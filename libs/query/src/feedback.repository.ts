import type { ScopedClickHouse } from './scoped-clickhouse';

export interface FeedbackRow {
  name: string;
  data_type: 'NUMERIC' | 'BOOLEAN' | 'CATEGORICAL' | 'TEXT';
  value_number: number | null;
  value_text: string;
  comment: string;
}

/** Reads of feedback (each client id once: FINAL) by trace; sessions keep theirs in session_figures. */
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
}
