import type { Pool } from 'pg';
import { REFRESH_SESSION_FIGURES_SQL, namedStatement, withProjectFilters, type ClickHouseClient } from '@spanforge/clickhouse';
import type { FeedbackRecord, FeedbackScope, ScoreConfig, ScoreType } from './feedback.model';

interface ScoreConfigRow {
  id: string;
  name: string;
  data_type: ScoreType;
  min_value: number | null;
  max_value: number | null;
  categories: string[] | null;
}

/** A score stored under a client's id: what it is about, and when it was first received (ms). */
export interface StoredScoreId {
  id: string;
  traceId: string;
  name: string;
  firstReceivedAt: number;
}

/** A time as ClickHouse parses a DateTime64(3, 'UTC') in JSONEachRow. */
const clickHouseTime = (ms: number): string => new Date(ms).toISOString().replace('T', ' ').replace('Z', '');

const toConfig = (r: ScoreConfigRow): ScoreConfig => ({
  id: r.id,
  name: r.name,
  dataType: r.data_type,
  minValue: r.min_value,
  maxValue: r.max_value,
  categories: r.categories,
});

/** Feedback SQL: scores in ClickHouse (append-only; the newest copy of a score wins), score configs in PostgreSQL. */
export class FeedbackRepository {
  constructor(
    private readonly clickhouse: ClickHouseClient,
    private readonly pg: Pool,
    /** A project's retention in days (0: kept), stored with each score so storage drops it in time. */
    private readonly retentionOf: (projectId: string) => Promise<number> | number = () => 0,
  ) {}

  /**
   * Stores the records of many requests (of any projects) as one insert. `receivedAt` is this
   * copy's arrival (ms), the version of the score; `firstReceivedAt`, when a copy of the score was
   * first received, is the score's time (received_at), kept by a re-send.
   */
  async insert(
    records: Array<{ scope: FeedbackScope; record: FeedbackRecord; receivedAt: number; firstReceivedAt?: number }>,
  ): Promise<void> {
    const projects = [...new Set(records.map(({ scope }) => scope.projectId))];
    const retention = new Map(
      await Promise.all(projects.map(async (projectId) => [projectId, await this.retentionOf(projectId)] as const)),
    );
    await this.clickhouse.insert({
      table: 'feedback',
      values: records.map(({ scope, record, receivedAt, firstReceivedAt }) => ({
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
        received_at: clickHouseTime(firstReceivedAt ?? receivedAt),
        // Each score's own arrival, so the newest copy wins and the scores of one insert keep their order.
        updated_at: clickHouseTime(receivedAt),
        retention_days: retention.get(scope.projectId) ?? 0,
      })),
      format: 'JSONEachRow',
      ...namedStatement('feedback.insert'),
    });
  }

  /**
   * The scores of the project already stored under these ids: the trace and name each id names,
   * and when it was first received. Every copy is read (no FINAL): copies of one score share its
   * trace and name, and the earliest arrival is its time.
   */
  async storedScoreIds(scope: FeedbackScope, ids: string[]): Promise<StoredScoreId[]> {
    const result = await this.clickhouse.query({
      query: withProjectFilters(
        `SELECT id, trace_id, name, toUnixTimestamp64Milli(min(received_at)) AS first_received_ms FROM feedback
              WHERE tenant_id = {tenantId:String} AND project_id = {projectId:String} AND id IN {ids:Array(String)}
              GROUP BY id, trace_id, name`,
        scope,
      ),
      query_params: { ...scope, ids },
      format: 'JSONEachRow',
      ...namedStatement('feedback.stored_score_ids'),
    });
    return (await result.json<{ id: string; trace_id: string; name: string; first_received_ms: string | number }>()).map((r) => ({
      id: r.id,
      traceId: r.trace_id,
      name: r.name,
      firstReceivedAt: Number(r.first_received_ms),
    }));
  }

  /** Recomputes the figures (feedback included) of the sessions these traces belong to, where stored and with one. */
  async refreshSessions(scope: FeedbackScope, traceIds: string[]): Promise<void> {
    await this.clickhouse.command({
      query: withProjectFilters(REFRESH_SESSION_FIGURES_SQL, scope),
      query_params: { ...scope, traceIds },
      ...namedStatement('feedback.refresh_sessions'),
    });
  }

  /** Which of these traces are stored yet (feedback for unknown traces is kept, and counted). */
  async storedTraces(scope: FeedbackScope, traceIds: string[]): Promise<Set<string>> {
    const result = await this.clickhouse.query({
      query: withProjectFilters(
        `SELECT DISTINCT trace_id FROM trace_index
              WHERE tenant_id = {tenantId:String} AND project_id = {projectId:String} AND trace_id IN {traceIds:Array(String)}`,
        scope,
      ),
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
