import { PROJECT_TABLES, awaitDeletes, deleteInPartitions, retainedCondition, type ClickHouseClient } from '@spanforge/clickhouse';
import type { ProjectRef } from './span.repository';

const DAY_MS = 86_400_000;

/**
 * The rows storage would keep past a project's retention: written before the retention was set or
 * shortened (under no retention, or a longer one), so their partitions expire later or never
 * (docs/architecture.md, "Retention in storage"), and already older than the retention keeps.
 * Rows written under a shorter retention expire on their own schedule and are not touched.
 */
function outlivedRows(table: (typeof PROJECT_TABLES)[number], retentionDays: number, now: number): string | null {
  const retained = retainedCondition(table, now - retentionDays * DAY_MS);
  if (retained === null) return null;
  if (!Number.isInteger(retentionDays) || retentionDays < 1) throw new Error(`not a retention in days: ${retentionDays}`);
  return `tenant_id = {tenantId:String} AND project_id = {projectId:String} AND (retention_days = 0 OR retention_days > ${retentionDays}) AND NOT (${retained})`;
}

/** Removes what a project's retention no longer keeps but its rows' partitions would. */
export class RetentionRepository {
  constructor(private readonly client: ClickHouseClient) {}

  /**
   * Deletes, table by table, a project's rows that outlived its retention (outlivedRows) with
   * lightweight DELETEs confined to the partitions holding such rows (deleteInPartitions), all
   * issued before it waits for the engine to apply them (awaitDeletes). A project whose rows all
   * carry its retention costs one read per table and no mutation. Returns the tables it deleted from.
   */
  async removeOutlived(project: ProjectRef, retentionDays: number, now = Date.now()): Promise<string[]> {
    const cleaned: string[] = [];
    for (const table of PROJECT_TABLES) {
      const outlived = outlivedRows(table, retentionDays, now);
      if (outlived === null) continue;
      const params = { tenantId: project.tenantId, projectId: project.projectId };
      const partitions = await deleteInPartitions(this.client, table, outlived, params, 'retention.delete_outlived');
      if (partitions.length > 0) cleaned.push(table);
    }
    await awaitDeletes(this.client, cleaned, project);
    return cleaned;
  }
}
