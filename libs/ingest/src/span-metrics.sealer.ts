import {
  HOUR_OF_MINUTE,
  namedStatement,
  withProjectFilters,
  MINUTE_TO_HOUR_FIGURES,
  SEAL_SAFETY_SECONDS,
  SPAN_FACT_AGGREGATES,
  SPAN_METRIC_DIMENSIONS,
  SPAN_METRIC_FIGURES,
  type ClickHouseClient,
  type SpanHourTable,
} from '@spanforge/clickhouse';
import { hoursOf, type ProjectRef } from './span.repository';
import type { WriterLog } from './span.writer';

/*
 * Keeps span_metrics_minute (infra/clickhouse/012_span_metrics.sql) up: every interval, the
 * minutes written lately (span_minute_dirt) that are older than `afterSeconds` and not covered by
 * their newest computation are computed again, whole, from span_facts. A computation is idempotent
 * (a copy of a span collapses in span_facts), so several workers sealing the same minute, or a
 * worker stopped half-way, only cost time: readers take what is unsealed from span_facts.
 */

export interface SealerOptions {
  /** A minute is sealed once it is this old: spans of it still arrive for a while (exporter batches, queue). */
  afterSeconds: number;
  intervalMs: number;
  /** How far back the dirt log is read: minutes written earlier and left unsealed are read raw until written again. */
  lookbackSeconds?: number;
  /** Minutes sealed per statement (one project each). */
  minutesPerStatement?: number;
}

/** Each project's minutes due for sealing: written within the lookback, old enough, not covered. */
const DUE_MINUTES_SQL = `
  SELECT c.tenant_id AS tenant_id, c.project_id AS project_id, groupArray(toUnixTimestamp64Milli(c.minute)) AS minutes
  FROM (SELECT tenant_id, project_id, minute, max(dirty_at) AS last_dirty FROM span_minute_dirt
        WHERE dirty_at >= now64(3) - INTERVAL {lookbackSeconds:UInt32} SECOND AND minute < now() - INTERVAL {afterSeconds:UInt32} SECOND
        GROUP BY tenant_id, project_id, minute) AS c
  LEFT JOIN (SELECT tenant_id, project_id, minute, max(computed_at) AS computed_at FROM span_metrics_minute
             WHERE (tenant_id, project_id, minute) IN (SELECT tenant_id, project_id, minute FROM span_minute_dirt
                                                       WHERE dirty_at >= now64(3) - INTERVAL {lookbackSeconds:UInt32} SECOND)
             GROUP BY tenant_id, project_id, minute) AS b
    ON c.tenant_id = b.tenant_id AND c.project_id = b.project_id AND c.minute = b.minute
  WHERE b.computed_at < c.last_dirty
  GROUP BY c.tenant_id, c.project_id`;

const dimensions = SPAN_METRIC_DIMENSIONS.join(', ');

/** One project's minutes computed again from span_facts; every row of the statement shares computed_at. */
const SEAL_SQL = `
  INSERT INTO span_metrics_minute (tenant_id, project_id, minute, ${dimensions}, ${SPAN_METRIC_FIGURES.join(', ')}, computed_at, retention_days)
  SELECT {tenantId:String}, {projectId:String}, minute, ${dimensions}, ${SPAN_FACT_AGGREGATES}, now64(6) - INTERVAL ${SEAL_SAFETY_SECONDS} SECOND,
    max(span_facts.retention_days)
  FROM span_facts FINAL
  WHERE tenant_id = {tenantId:String} AND project_id = {projectId:String} AND minute >= fromUnixTimestamp64Milli(arrayMin({minutesMs:Array(Int64)}), 'UTC') AND minute <= fromUnixTimestamp64Milli(arrayMax({minutesMs:Array(Int64)}), 'UTC')
    AND toUnixTimestamp64Milli(minute) IN {minutesMs:Array(Int64)}
  GROUP BY minute, ${dimensions}
  SETTINGS max_partitions_per_insert_block = 0`;

/**
 * One project's hours ({hoursMs}) merged again from their minute rows, each minute's newest
 * computation, into one hour rollup (`table`: with the span name, or without it, grouped by the
 * other dimensions): the hour row records the newest minute computation it took
 * (source_computed_at) and the oldest (min_source_computed_at).
 */
function sealHoursSql(table: SpanHourTable): string {
  const dimensions = table === 'span_metrics_hour' ? SPAN_METRIC_DIMENSIONS : SPAN_METRIC_DIMENSIONS.filter((d) => d !== 'name');
  return `
  INSERT INTO ${table} (tenant_id, project_id, hour, ${dimensions.join(', ')}, ${SPAN_METRIC_FIGURES.join(', ')}, source_computed_at, min_source_computed_at,
    computed_at, retention_days)
  SELECT {tenantId:String}, {projectId:String}, ${HOUR_OF_MINUTE.replaceAll('minute', 'r.minute')} AS hour, ${dimensions.map((d) => `r.${d}`).join(', ')},
         ${MINUTE_TO_HOUR_FIGURES}, max(r.computed_at), min(r.computed_at), now64(6), max(r.retention_days)
  FROM (SELECT * FROM span_metrics_minute FINAL
        WHERE tenant_id = {tenantId:String} AND project_id = {projectId:String} AND minute >= fromUnixTimestamp64Milli(arrayMin({hoursMs:Array(Int64)}), 'UTC') AND minute < fromUnixTimestamp64Milli(arrayMax({hoursMs:Array(Int64)}) + 3600000, 'UTC')
          AND toUnixTimestamp64Milli(${HOUR_OF_MINUTE}) IN {hoursMs:Array(Int64)}
          AND (minute, computed_at) IN (SELECT minute, max(computed_at) FROM span_metrics_minute
                                        WHERE tenant_id = {tenantId:String} AND project_id = {projectId:String}
                                          AND minute >= fromUnixTimestamp64Milli(arrayMin({hoursMs:Array(Int64)}), 'UTC') AND minute < fromUnixTimestamp64Milli(arrayMax({hoursMs:Array(Int64)}) + 3600000, 'UTC')
          AND toUnixTimestamp64Milli(${HOUR_OF_MINUTE}) IN {hoursMs:Array(Int64)}
                                        GROUP BY minute)) AS r
  GROUP BY hour, ${dimensions.map((d) => `r.${d}`).join(', ')}
  SETTINGS max_partitions_per_insert_block = 0`;
}

/** The hour rollups, in the order the sealer writes them: the one it checks for merged hours (the coarse one) last. */
const SEAL_HOURS = (['span_metrics_hour', 'span_metrics_hour_coarse'] as const).map((table) => ({ table, sql: sealHoursSql(table) }));

/**
 * Each project's hours due for merging: whole hours past the horizon with a minute computed in
 * the lookback whose hour row is missing or merged before that computation. Read from the hour
 * rollup written last, so an hour merged into the first and not the second is merged again.
 */
const DUE_HOURS_SQL = `
  SELECT m.tenant_id AS tenant_id, m.project_id AS project_id, groupArray(toUnixTimestamp64Milli(m.hour)) AS hours
  FROM (SELECT tenant_id, project_id, ${HOUR_OF_MINUTE} AS hour, max(computed_at) AS newest FROM span_metrics_minute
        WHERE computed_at >= now64(6) - INTERVAL {lookbackSeconds:UInt32} SECOND
        GROUP BY tenant_id, project_id, hour
        HAVING hour + INTERVAL 1 HOUR <= now() - INTERVAL {afterSeconds:UInt32} SECOND) AS m
  LEFT JOIN (SELECT tenant_id, project_id, hour, max(source_computed_at) AS merged FROM span_metrics_hour_coarse
             WHERE computed_at >= now64(6) - INTERVAL {lookbackSeconds:UInt32} SECOND - INTERVAL 1 DAY
             GROUP BY tenant_id, project_id, hour) AS h
    ON m.tenant_id = h.tenant_id AND m.project_id = h.project_id AND m.hour = h.hour
  WHERE h.merged < m.newest
  GROUP BY m.tenant_id, m.project_id`;

const HOUR_MS = 3_600_000;

export class SpanMetricsSealer {
  private timer: NodeJS.Timeout | undefined;
  private running: Promise<void> | undefined;
  /** Set by stop: a pass ends after the statement it is in (what it leaves stays due in the dirt log). */
  private stopping = false;
  private readonly lookbackSeconds: number;
  private readonly minutesPerStatement: number;

  constructor(
    private readonly client: ClickHouseClient,
    private readonly log: WriterLog,
    private readonly options: SealerOptions,
  ) {
    this.lookbackSeconds = options.lookbackSeconds ?? 86_400;
    this.minutesPerStatement = options.minutesPerStatement ?? 240;
  }

  start(): void {
    const tick = () => {
      this.running = this.sealDue()
        .then(() => undefined)
        .catch((error: unknown) =>
          this.log.warn(`span metrics sealer: a pass failed and is tried again in ${this.options.intervalMs} ms: ${String(error)}`),
        )
        .finally(() => {
          this.running = undefined;
          if (this.timer) this.timer = setTimeout(tick, this.options.intervalMs).unref();
        });
    };
    this.timer = setTimeout(tick, this.options.intervalMs).unref();
  }

  /**
   * Stops after the statement running now, not after the pass: a pass over minutes spread across
   * months or years takes many statements (seconds each on a busy engine), and ingest jobs that wait
   * for ClickHouse at shutdown would wait for all of them.
   */
  async stop(): Promise<void> {
    this.stopping = true;
    clearTimeout(this.timer);
    this.timer = undefined;
    await this.running;
  }

  /** One pass: seals every minute due; returns how many minutes it computed. */
  async sealDue(): Promise<number> {
    const result = await this.client.query({
      query: DUE_MINUTES_SQL,
      query_params: { lookbackSeconds: this.lookbackSeconds, afterSeconds: this.options.afterSeconds },
      format: 'JSONEachRow',
      ...namedStatement('ingest.span_metrics_due'),
    });
    const due = await result.json<{ tenant_id: string; project_id: string; minutes: Array<number | string> }>();
    let sealed = 0;
    for (const project of due) {
      if (this.stopping) return sealed;
      sealed += await this.sealMinutes({ tenantId: project.tenant_id, projectId: project.project_id }, project.minutes.map(Number));
    }
    if (this.stopping) return sealed;
    const hours = await this.client.query({
      query: DUE_HOURS_SQL,
      query_params: { lookbackSeconds: this.lookbackSeconds, afterSeconds: this.options.afterSeconds },
      format: 'JSONEachRow',
      ...namedStatement('ingest.span_metrics_due_hours'),
    });
    for (const project of await hours.json<{ tenant_id: string; project_id: string; hours: Array<number | string> }>()) {
      await this.sealHours({ tenantId: project.tenant_id, projectId: project.project_id }, project.hours.map(Number));
    }
    return sealed;
  }

  /**
   * Computes these minutes (ms since the epoch, whole minutes) of one project again, whatever their
   * state, then merges their hours that are wholly past the horizon: what a pass does for the
   * minutes due, and what a back-fill does for older ones. Returns the minutes computed.
   */
  async seal(project: ProjectRef, minutesMs: number[], now = Date.now()): Promise<number> {
    const sealed = await this.sealMinutes(project, minutesMs);
    const horizon = now - this.options.afterSeconds * 1000;
    await this.sealHours(
      project,
      hoursOf(minutesMs).filter((hour) => hour + HOUR_MS <= horizon),
    );
    return sealed;
  }

  private async sealMinutes(project: ProjectRef, minutesMs: number[]): Promise<number> {
    const minutes = [...minutesMs].sort((a, b) => a - b);
    let sealed = 0;
    for (let at = 0; at < minutes.length && !this.stopping; at += this.minutesPerStatement) {
      const chunk = minutes.slice(at, at + this.minutesPerStatement);
      // Erased traces left out, as the API's reads do: a span of one stored after its erasure job
      // ran is in span_facts until the job, run again, deletes it and marks its minute anew.
      await this.client.command({
        query: withProjectFilters(SEAL_SQL, project, { erasures: true }),
        query_params: { ...project, minutesMs: chunk },
        ...namedStatement('ingest.span_metrics_seal'),
      });
      sealed += chunk.length;
    }
    return sealed;
  }

  private async sealHours(project: ProjectRef, hoursMs: number[]): Promise<void> {
    const hours = [...hoursMs].sort((a, b) => a - b);
    const perStatement = Math.max(1, Math.floor(this.minutesPerStatement / 60));
    for (let at = 0; at < hours.length && !this.stopping; at += perStatement) {
      for (const { table, sql } of SEAL_HOURS)
        await this.client.command({
          query: withProjectFilters(sql, project),
          query_params: { ...project, hoursMs: hours.slice(at, at + perStatement) },
          ...namedStatement(table === 'span_metrics_hour' ? 'ingest.span_metrics_seal_hours' : 'ingest.span_metrics_seal_coarse_hours'),
        });
    }
  }
}
