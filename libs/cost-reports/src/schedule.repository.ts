import type { Pool } from 'pg';

export interface ScheduleRow {
  id: string;
  tenant_id: string;
  project_id: string;
  cron: string;
  timezone: string;
  window_iso: string;
  window_ms: string;
  group_by: string[];
  webhook_url: string;
  include_feedback: boolean;
  signing_secret: string;
  created_at: Date;
}

export interface ReportRow {
  id: string;
  tenant_id: string;
  project_id: string;
  schedule_id: string | null;
  window_start: Date;
  window_end: Date;
  report: unknown;
  created_at: Date;
  delivery_status: 'pending' | 'delivered' | 'failed' | 'not_requested';
  delivery_attempts: number;
  last_delivery_error: string | null;
  delivered_at: Date | null;
}

const SCHEDULE_COLUMNS =
  'id, tenant_id, project_id, cron, timezone, window_iso, window_ms, group_by, webhook_url, include_feedback, signing_secret, created_at';
const REPORT_COLUMNS =
  'id, tenant_id, project_id, schedule_id, window_start, window_end, report, created_at, delivery_status, delivery_attempts, last_delivery_error, delivered_at';

/** Ids are UUIDs; anything else names nothing (and PostgreSQL would refuse it as a uuid). */
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** All SQL of cost report schedules and reports (PostgreSQL). */
export class CostReportRepository {
  constructor(private readonly pool: Pool) {}

  async createSchedule(s: Omit<ScheduleRow, 'id' | 'created_at'>): Promise<ScheduleRow> {
    const { rows } = await this.pool.query<ScheduleRow>(
      `INSERT INTO cost_report_schedules (tenant_id, project_id, cron, timezone, window_iso, window_ms, group_by, webhook_url, include_feedback, signing_secret)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10) RETURNING ${SCHEDULE_COLUMNS}`,
      [
        s.tenant_id,
        s.project_id,
        s.cron,
        s.timezone,
        s.window_iso,
        s.window_ms,
        s.group_by,
        s.webhook_url,
        s.include_feedback,
        s.signing_secret,
      ],
    );
    return rows[0]!;
  }

  async updateSchedule(
    projectId: string,
    id: string,
    s: Pick<ScheduleRow, 'cron' | 'timezone' | 'window_iso' | 'window_ms' | 'group_by' | 'webhook_url' | 'include_feedback'>,
  ): Promise<ScheduleRow | undefined> {
    const { rows } = await this.pool.query<ScheduleRow>(
      `UPDATE cost_report_schedules SET cron = $3, timezone = $4, window_iso = $5, window_ms = $6, group_by = $7, webhook_url = $8, include_feedback = $9
       WHERE project_id = $1 AND id = $2 AND deleted_at IS NULL RETURNING ${SCHEDULE_COLUMNS}`,
      [projectId, id, s.cron, s.timezone, s.window_iso, s.window_ms, s.group_by, s.webhook_url, s.include_feedback],
    );
    return rows[0];
  }

  async deleteSchedule(projectId: string, id: string): Promise<boolean> {
    const { rowCount } = await this.pool.query(
      'UPDATE cost_report_schedules SET deleted_at = now() WHERE project_id = $1 AND id = $2 AND deleted_at IS NULL',
      [projectId, id],
    );
    return (rowCount ?? 0) > 0;
  }

  async schedule(id: string): Promise<ScheduleRow | undefined> {
    const { rows } = await this.pool.query<ScheduleRow>(
      `SELECT ${SCHEDULE_COLUMNS} FROM cost_report_schedules WHERE id = $1 AND deleted_at IS NULL`,
      [id],
    );
    return rows[0];
  }

  async schedules(projectId: string): Promise<ScheduleRow[]> {
    const { rows } = await this.pool.query<ScheduleRow>(
      `SELECT ${SCHEDULE_COLUMNS} FROM cost_report_schedules WHERE project_id = $1 AND deleted_at IS NULL ORDER BY created_at`,
      [projectId],
    );
    return rows;
  }

  /** A schedule's project, deleted schedules included (their jobs still need a turn to find that out). */
  async projectOfSchedule(id: string): Promise<string | undefined> {
    if (!UUID.test(id)) return undefined;
    const { rows } = await this.pool.query<{ project_id: string }>('SELECT project_id FROM cost_report_schedules WHERE id = $1', [id]);
    return rows[0]?.project_id;
  }

  async projectOfReport(id: string): Promise<string | undefined> {
    if (!UUID.test(id)) return undefined;
    const { rows } = await this.pool.query<{ project_id: string }>('SELECT project_id FROM cost_reports WHERE id = $1', [id]);
    return rows[0]?.project_id;
  }

  async activeSchedules(): Promise<ScheduleRow[]> {
    const { rows } = await this.pool.query<ScheduleRow>(`SELECT ${SCHEDULE_COLUMNS} FROM cost_report_schedules WHERE deleted_at IS NULL`);
    return rows;
  }

  async lastWindowEnd(scheduleId: string): Promise<Date | null> {
    const { rows } = await this.pool.query<{ end: Date | null }>('SELECT max(window_end) AS end FROM cost_reports WHERE schedule_id = $1', [
      scheduleId,
    ]);
    return rows[0]?.end ?? null;
  }

  /**
   * Inserts the report of a window unless that window already has one; returns the stored report
   * either way. Stored under the report's own id, so the row, the delivered body, the CSV and the
   * HTML all name the same report.
   */
  async insertReport(r: {
    tenantId: string;
    projectId: string;
    scheduleId: string | null;
    windowStart: Date;
    windowEnd: Date;
    report: { id: string };
    deliver: boolean;
  }): Promise<{ row: ReportRow; created: boolean }> {
    const { rows } = await this.pool.query<ReportRow>(
      `INSERT INTO cost_reports (id, tenant_id, project_id, schedule_id, window_start, window_end, report, delivery_status)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8) ON CONFLICT (schedule_id, window_end) DO NOTHING RETURNING ${REPORT_COLUMNS}`,
      [
        r.report.id,
        r.tenantId,
        r.projectId,
        r.scheduleId,
        r.windowStart,
        r.windowEnd,
        JSON.stringify(r.report),
        r.deliver ? 'pending' : 'not_requested',
      ],
    );
    if (rows[0]) return { row: rows[0], created: true };
    const existing = await this.pool.query<ReportRow>(
      `SELECT ${REPORT_COLUMNS} FROM cost_reports WHERE schedule_id = $1 AND window_end = $2`,
      [r.scheduleId, r.windowEnd],
    );
    return { row: existing.rows[0]!, created: false };
  }

  async report(projectId: string, id: string): Promise<ReportRow | undefined> {
    if (!/^[0-9a-f-]{36}$/i.test(id)) return undefined;
    const { rows } = await this.pool.query<ReportRow>(
      `SELECT ${REPORT_COLUMNS} FROM cost_reports WHERE project_id = $1 AND id = $2 AND expired_at IS NULL`,
      [projectId, id],
    );
    return rows[0];
  }

  async reportById(id: string): Promise<ReportRow | undefined> {
    const { rows } = await this.pool.query<ReportRow>(`SELECT ${REPORT_COLUMNS} FROM cost_reports WHERE id = $1 AND expired_at IS NULL`, [
      id,
    ]);
    return rows[0];
  }

  async reports(projectId: string, limit: number): Promise<ReportRow[]> {
    const { rows } = await this.pool.query<ReportRow>(
      `SELECT ${REPORT_COLUMNS} FROM cost_reports WHERE project_id = $1 AND expired_at IS NULL ORDER BY window_end DESC, created_at DESC LIMIT $2`,
      [projectId, limit],
    );
    return rows;
  }

  async pendingDeliveries(scheduleId: string): Promise<string[]> {
    const { rows } = await this.pool.query<{ id: string }>(
      "SELECT id FROM cost_reports WHERE schedule_id = $1 AND delivery_status = 'pending' AND expired_at IS NULL",
      [scheduleId],
    );
    return rows.map((r) => r.id);
  }

  /**
   * Empties the reports past their project's retention (by the start of their window), keeping
   * their rows: a window's row is what keeps its report from being made again. A report still
   * waiting for delivery is not delivered. Returns how many expired.
   */
  async expireReports(): Promise<number> {
    const { rowCount } = await this.pool.query(
      `UPDATE cost_reports r SET report = '{}'::jsonb, expired_at = now(),
         delivery_status = CASE WHEN r.delivery_status = 'pending' THEN 'failed' ELSE r.delivery_status END,
         last_delivery_error = CASE WHEN r.delivery_status = 'pending' THEN 'expired before delivery: past the project''s retention'
                                    ELSE r.last_delivery_error END
       FROM data_policies p
       WHERE p.project_id = r.project_id AND r.expired_at IS NULL AND jsonb_typeof(p.policy -> 'retentionDays') = 'number'
         AND r.window_start < now() - make_interval(days => (p.policy ->> 'retentionDays')::int)`,
    );
    return rowCount ?? 0;
  }

  async recordDelivery(id: string, outcome: { delivered: boolean; error?: string; final: boolean }): Promise<void> {
    await this.pool.query(
      `UPDATE cost_reports SET delivery_attempts = delivery_attempts + 1,
         delivery_status = CASE WHEN $2 THEN 'delivered' WHEN $4 THEN 'failed' ELSE delivery_status END,
         delivered_at = CASE WHEN $2 THEN now() ELSE delivered_at END, last_delivery_error = $3
       WHERE id = $1`,
      [id, outcome.delivered, outcome.error ?? null, outcome.final],
    );
  }
}
