import { PROJECT_TABLES, namedStatement, retainedCondition, withProjectFilters, type ClickHouseClient } from '@spanforge/clickhouse';
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
   * Deletes, table by table, a project's rows that outlived its retention (outlivedRows) with a
   * lightweight DELETE (the rows are masked at once and gone from their parts at the next merge).
   * A table is only touched when it holds such a row, so a project whose rows all carry its
   * retention costs one primary-key probe per table. Returns the tables it deleted from.
   */
  async removeOutlived(project: ProjectRef, retentionDays: number, now = Date.now()): Promise<string[]> {
    const cleaned: string[] = [];
    for (const table of PROJECT_TABLES) {
      const outlived = outlivedRows(table, retentionDays, now);
      if (outlived === null) continue;
      const probe = await this.client.query({
        query: withProjectFilters(`SELECT 1 AS found FROM ${table} WHERE ${outlived} LIMIT 1`, project),
        query_params: { tenantId: project.tenantId, projectId: project.projectId },
        format: 'JSONEachRow',
        ...namedStatement('retention.probe_outlived'),
      });
      if ((await probe.json()).length === 0) continue;
      await this.client.command({
        query: `DELETE FROM ${table} WHERE ${outlived}`,
        query_params: { tenantId: project.tenantId, projectId: project.projectId },
        ...namedStatement('retention.delete_outlived'),
      });
      cleaned.push(table);
    }
    return cleaned;
  }
}
