import { namedStatement, type ClickHouseClient } from '@spanforge/clickhouse';

/**
 * Spans accepted per tenant since an instant, from the ingest accounting: what the gateways hold
 * against tenant quotas. A tenant-wide read by design (a quota counts all of a tenant's projects),
 * of the accounting only, and only for the tenants asked about; the gateway is its one caller.
 */
export class TenantUsageRepository {
  constructor(private readonly client: ClickHouseClient) {}

  /**
   * Spans accepted in the accounting minutes [fromMs, toMs) (toMs undefined: up to now), per
   * tenant of `tenantIds`; a tenant without any is left out. Read with FINAL: a retried job's rows
   * replace its earlier ones.
   */
  async acceptedSpans(tenantIds: readonly string[], fromMs: number, toMs?: number): Promise<Map<string, number>> {
    if (tenantIds.length === 0) return new Map();
    const until = toMs === undefined ? '' : " AND minute < fromUnixTimestamp64Milli({toMs:Int64}, 'UTC')";
    const result = await this.client.query({
      query: `SELECT tenant_id, sum(spans) AS spans FROM ingest_accounting FINAL
              WHERE tenant_id IN {tenantIds:Array(String)} AND outcome = 'accepted'
                AND minute >= fromUnixTimestamp64Milli({fromMs:Int64}, 'UTC')${until}
              GROUP BY tenant_id
              SETTINGS output_format_json_quote_64bit_integers = 0`,
      query_params: { tenantIds, fromMs, ...(toMs === undefined ? {} : { toMs }) },
      format: 'JSONEachRow',
      ...namedStatement('gateway.tenant_accepted_spans'),
    });
    const rows = await result.json<{ tenant_id: string; spans: number | string }>();
    return new Map(rows.map((r) => [r.tenant_id, Number(r.spans)]));
  }
}
