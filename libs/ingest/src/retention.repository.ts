import {
  PROJECT_TABLES,
  awaitDeletes,
  deleteInPartitions,
  retainedCondition,
  rewriteWithoutDeleted,
  type ClickHouseClient,
  type DeletedPartitions,
  type ProjectTable,
} from '@spanforge/clickhouse';
import type { ProjectRef } from './span.repository';

const DAY_MS = 86_400_000;

/**
 * The rows storage would keep past a project's retention: written before the retention was set or
 * shortened (under no retention, or a longer one), so their partitions expire later or never
 * (docs/architecture.md, "Retention in storage"), and already older than the retention keeps.
 * Rows written under a shorter retention expire on their own schedule and are not touched.
 */
function outlivedRows(table: ProjectTable, retentionDays: number, now: number): string | null {
  const retained = retainedCondition(table, now - retentionDays * DAY_MS);
  if (retained === null) return null;
  if (!Number.isInteger(retentionDays) || retentionDays < 1) throw new Error(`not a retention in days: ${retentionDays}`);
  return `tenant_id = {tenantId:String} AND project_id = {projectId:String} AND (retention_days = 0 OR retention_days > ${retentionDays}) AND NOT (${retained})`;
}

/**
 * The order of the sweep: what the worker computes rollups from before the rollups, so that a
 * rollup computed again while the sweep runs (the metrics sealer re-seals a minute whose row was
 * deleted) finds its sources gone and writes nothing back.
 */
const SOURCES_FIRST: readonly ProjectTable[] = [
  'spans',
  'span_log_events',
  'span_facts',
  'span_minute_marks',
  'span_hour_marks',
  'traces',
  'trace_index',
  'sessions',
  'runs',
  'trace_figures',
  'session_figures',
  'session_minutes',
  'trace_minutes',
  'cost_minute',
  'cost_daily',
  'trace_metrics_minute',
  'trace_metrics_hour',
  'span_metrics_minute',
  'span_metrics_hour',
  'span_metrics_hour_coarse',
];
export const SWEEP_ORDER: readonly ProjectTable[] = [...SOURCES_FIRST, ...PROJECT_TABLES.filter((table) => !SOURCES_FIRST.includes(table))];

/** Removes what a project's retention no longer keeps but its rows' partitions would. */
export class RetentionRepository {
  constructor(private readonly client: ClickHouseClient) {}

  /**
   * Deletes, table by table, a project's rows that outlived its retention (outlivedRows) with
   * lightweight DELETEs confined to the partitions holding such rows (deleteInPartitions), all
   * issued before it waits for the engine to apply them (awaitDeletes), then the partitions are
   * rewritten without them in the background (rewriteWithoutDeleted). A project whose rows all
   * carry its retention costs one read per table and no mutation. Returns the tables it deleted from.
   */
  async removeOutlived(project: ProjectRef, retentionDays: number, now = Date.now()): Promise<string[]> {
    const deleted: DeletedPartitions[] = [];
    for (const table of SWEEP_ORDER) {
      const outlived = outlivedRows(table, retentionDays, now);
      if (outlived === null) continue;
      const params = { tenantId: project.tenantId, projectId: project.projectId };
      const partitions = await deleteInPartitions(this.client, table, outlived, params, 'retention.delete_outlived');
      if (partitions.partitions.length > 0) deleted.push(partitions);
    }
    const cleaned = deleted.map((d) => d.table);
    await awaitDeletes(this.client, cleaned, project);
    await rewriteWithoutDeleted(this.client, deleted, 'retention.rewrite');
    return cleaned;
  }
}
