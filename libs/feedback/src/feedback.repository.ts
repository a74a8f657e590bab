import type { Pool } from 'pg';
import { REFRESH_SESSION_FIGURES_SQL, namedStatement, type ClickHouseClient } from '@spanforge/clickhouse';
import type { FeedbackRecord, FeedbackScope, ScoreConfig, ScoreType } from './feedback.model';

interface ScoreConfigRow {
  id: string;
  name: string;
  data_type: ScoreType;
  min_value: number | null;
  max_value: number | null;
  categories: string[] | null;
}

const toConfig = (r: ScoreConfigRow): ScoreConfig => ({
  id: r.id,
  name: r.name,
  dataType: r.data_type,
  minValue: r.min_value,
  maxValue: r.max_value,
  categories: r.categories,
});

/** Feedback SQL: scores in ClickHouse (append-only), score configs in PostgreSQL. */
export class FeedbackRepository {
  constructor(
    private readonly clickhouse: ClickHouseClient,
    private readonly pg: Pool,
  ) {}

  /** Stores the records of many requests (of any projects) as one insert. */
  async insert(records: Array<{ scope: FeedbackScope; record: FeedbackRecord; receivedAt: number }>): Promise<void> {
    await this.clickhouse.insert({
      table: 'feedback',
      values: records.map(({ scope, record, receivedAt }) => ({
        tenant_id: scope.tenantId,
        project_id: scope.projectId,
        trace_id: record.traceId,
        id: record.id,
        span_id: record.spanId,
        name: record.name,
        data_type: record.dataType,
        value_number: record.valueNumber,
        value_text: record.valueText,
        comment: record.comment,
        source: record.source,
        // Each score's own arrival, so the scores of one insert keep their order (oldest first).
        received_at: new Date(receivedAt).toISOString().replace('T', ' ').replace('Z', ''),
      })),
      format: 'JSONEachRow',
      ...namedStatement('feedback.insert'),
    });
  }

  /** Recomputes the figures (feedback included) of the sessions these traces belong to, where stored and with one. */
  async refreshSessions(scope: FeedbackScope, traceIds: string[]): Promise<void> {
    await this.clickhouse.command({
      query: REFRESH_SESSION_FIGURES_SQL,
      query_params: { ...scope, traceIds },
      ...namedStatement('feedback.refresh_sessions'),
    });
  }

  /** Which of these traces are stored yet (feedback for unknown traces is kept, and counted). */
  async storedTraces(scope: FeedbackScope, traceIds: string[]): Promise<Set<string>> {
    const result = await this.clickhouse.query({
      query: `SELECT DISTINCT trace_id FROM trace_index
              WHERE tenant_id = {tenantId:String} AND project_id = {projectId:String} AND trace_id IN {traceIds:Array(String)}`,
      query_params: { ...scope, traceIds },
      format: 'JSONEachRow',
      ...namedStatement('feedback.stored_traces'),
    });
    return new Set((await result.json<{ trace_id: string }>()).map((r) => r.trace_id));
  }

  async scoreConfig(projectId: string, name: string): Promise<ScoreConfig | undefined> {
    const { rows } = await this.pg.query<ScoreConfigRow>(
      'SELECT id, name, data_type, min_value, max_value, categories FROM score_configs WHERE project_id = $1 AND name = $2 AND archived_at IS NULL',
      [projectId, name],
    );
    return rows[0] && toConfig(rows[0]);
  }

  async scoreConfigs(projectId: string): Promise<ScoreConfig[]> {
    const { rows } = await this.pg.query<ScoreConfigRow>(
      'SELECT id, name, data_type, min_value, max_value, categories FROM score_configs WHERE project_id = $1 AND archived_at IS NULL ORDER BY name',
      [projectId],
    );
    return rows.map(toConfig);
  }

  async createScoreConfig(
    scope: { tenantId: string; projectId: string },
    config: Omit<ScoreConfig, 'id'>,
  ): Promise<ScoreConfig | undefined> {
    const { rows } = await this.pg.query<ScoreConfigRow>(
      `INSERT INTO score_configs (tenant_id, project_id, name, data_type, min_value, max_value, categories) VALUES ($1, $2, $3, $4, $5, $6, $7)
       ON CONFLICT (project_id, name) WHERE archived_at IS NULL DO NOTHING RETURNING id, name, data_type, min_value, max_value, categories`,
      [scope.tenantId, scope.projectId, config.name, config.dataType, config.minValue, config.maxValue, config.categories],
    );
    return rows[0] && toConfig(rows[0]);
  }

  /** New bounds and categories of a live config (its type stays); undefined when there is none by that name. */
  async updateScoreConfig(
    projectId: string,
    name: string,
    change: Pick<ScoreConfig, 'minValue' | 'maxValue' | 'categories'>,
  ): Promise<ScoreConfig | undefined> {
    const { rows } = await this.pg.query<ScoreConfigRow>(
      `UPDATE score_configs SET min_value = $3, max_value = $4, categories = $5 WHERE project_id = $1 AND name = $2 AND archived_at IS NULL
       RETURNING id, name, data_type, min_value, max_value, categories`,
      [projectId, name, change.minValue, change.maxValue, change.categories],
    );
    return rows[0] && toConfig(rows[0]);
  }

  /** Archives the live config of that name; undefined when there is none. */
  async archiveScoreConfig(projectId: string, name: string): Promise<ScoreConfig | undefined> {
    const { rows } = await this.pg.query<ScoreConfigRow>(
      `UPDATE score_configs SET archived_at = now() WHERE project_id = $1 AND name = $2 AND archived_at IS NULL
       RETURNING id, name, data_type, min_value, max_value, categories`,
      [projectId, name],
    );
    return rows[0] && toConfig(rows[0]);
  }
}
