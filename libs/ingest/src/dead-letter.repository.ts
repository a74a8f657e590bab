import { randomUUID } from 'node:crypto';
import {
  awaitDeletes,
  deleteInPartitions,
  namedStatement,
  rewriteWithoutDeleted,
  withProjectFilters,
  type ClickHouseClient,
} from '@spanforge/clickhouse';
import { letterHoldsErased } from './dead-letter-traces';
import type { ProjectRef } from './span.repository';

export type DeadLetterKind = 'span_row' | 'export_job' | 'accounting_job';

/** What the pipeline could not store, kept with why (infra/clickhouse/010_dead_letters.sql). */
export interface DeadLetter {
  tenantId: string;
  projectId: string;
  id: string;
  kind: DeadLetterKind;
  /** A short code: `store_refused`, `retries_exhausted`, `poison_export`, `stalled`. */
  reason: string;
  /** The error as the store or the worker said it. */
  error: string;
  exportId: string;
  spans: number;
  /** A `spans` JSONEachRow line (span_row), or the queue job as JSON `{ name, data }` (export_job, accounting_job). */
  payload: string;
  /** Milliseconds since the epoch. */
  deadLetteredAt: number;
  replayedAt: number | null;
  /** The project's retention when it was dead-lettered (0: kept): a letter holds content too. */
  retentionDays: number;
}

interface DeadLetterRow {
  tenant_id: string;
  project_id: string;
  id: string;
  kind: DeadLetterKind;
  reason: string;
  error: string;
  export_id: string;
  spans: number;
  payload: string;
  dead_lettered_at: string;
  replayed_at: string | null;
  retention_days: number;
}

/** Dead letters read at a time when an erasure looks for its traces in them (payloads can be MiBs). */
const ERASURE_PAGE = 100;

/** Errors are kept to this many characters (a ClickHouse message quotes the input it choked on). */
const MAX_ERROR_LENGTH = 4_000;

/** `YYYY-MM-DD hh:mm:ss.mmm` (UTC), how DateTime64(3) reads and writes in JSON. */
function timeText(ms: number): string {
  return new Date(ms).toISOString().replace('T', ' ').replace('Z', '');
}

function msOf(text: string): number {
  return Date.parse(`${text.replace(' ', 'T')}Z`);
}

export function newDeadLetterId(): string {
  return randomUUID();
}

/** All SQL of the dead-letter store; every read is bound to one tenant and project. */
export class DeadLetterRepository {
  constructor(private readonly client: ClickHouseClient) {}

  async add(letters: DeadLetter[]): Promise<void> {
    if (letters.length === 0) return;
    await this.client.insert({
      table: 'dead_letters',
      values: letters.map(toRow),
      format: 'JSONEachRow',
      ...namedStatement('ingest.insert_dead_letters'),
    });
  }

  /** A project's dead letters, newest first, without their payloads. */
  async list(project: ProjectRef, options: { first: number; includeReplayed: boolean }): Promise<Array<Omit<DeadLetter, 'payload'>>> {
    const result = await this.client.query({
      query: withProjectFilters(
        `SELECT tenant_id, project_id, id, kind, reason, error, export_id, spans, '' AS payload,
                     toString(dead_lettered_at) AS dead_lettered_at, if(isNull(replayed_at), NULL, toString(replayed_at)) AS replayed_at, retention_days
              FROM dead_letters FINAL
              WHERE tenant_id = {tenantId:String} AND project_id = {projectId:String}
                AND ({includeReplayed:UInt8} = 1 OR isNull(replayed_at))
              ORDER BY dead_lettered_at DESC, id
              LIMIT {first:UInt32}`,
        project,
      ),
      query_params: { ...project, first: options.first, includeReplayed: options.includeReplayed ? 1 : 0 },
      format: 'JSONEachRow',
      ...namedStatement('ingest.list_dead_letters'),
    });
    return (await result.json<DeadLetterRow>()).map(fromRow);
  }

  /** The given dead letters of a project that are not replayed yet, with their payloads; all of them when `ids` is undefined. */
  async pending(project: ProjectRef, ids: string[] | undefined, limit: number): Promise<DeadLetter[]> {
    const result = await this.client.query({
      query: withProjectFilters(
        `SELECT tenant_id, project_id, id, kind, reason, error, export_id, spans, payload,
                     toString(dead_lettered_at) AS dead_lettered_at, NULL AS replayed_at, retention_days
              FROM dead_letters FINAL
              WHERE tenant_id = {tenantId:String} AND project_id = {projectId:String} AND isNull(replayed_at)
                AND ({all:UInt8} = 1 OR id IN {ids:Array(String)})
              ORDER BY dead_lettered_at, id
              LIMIT {limit:UInt32}`,
        project,
      ),
      query_params: { ...project, ids: ids ?? [], all: ids === undefined ? 1 : 0, limit },
      format: 'JSONEachRow',
      ...namedStatement('ingest.pending_dead_letters'),
    });
    return (await result.json<DeadLetterRow>()).map(fromRow);
  }

  /**
   * Deletes the project's dead letters that hold content of `traces` or `sessions` (erasure:
   * letterHoldsErased), replayed or not. Returns how many letters went.
   */
  async eraseHolding(project: ProjectRef, traces: ReadonlySet<string>, sessions: ReadonlySet<string>): Promise<number> {
    if (traces.size === 0 && sessions.size === 0) return 0;
    const holding = new Set<string>();
    let after = '';
    for (;;) {
      const result = await this.client.query({
        query: withProjectFilters(
          `SELECT id, kind, payload FROM dead_letters
           WHERE tenant_id = {tenantId:String} AND project_id = {projectId:String} AND kind != 'accounting_job' AND id > {after:String}
           ORDER BY id LIMIT {page:UInt32}`,
          project,
        ),
        query_params: { ...project, after, page: ERASURE_PAGE },
        format: 'JSONEachRow',
        ...namedStatement('erasure.read_dead_letters'),
      });
      const letters = await result.json<Pick<DeadLetterRow, 'id' | 'kind' | 'payload'>>();
      for (const letter of letters) if (letterHoldsErased(letter, traces, sessions)) holding.add(letter.id);
      if (letters.length < ERASURE_PAGE) break;
      after = letters.at(-1)!.id;
    }
    if (holding.size === 0) return 0;
    const deleted = await deleteInPartitions(
      this.client,
      'dead_letters',
      'tenant_id = {tenantId:String} AND project_id = {projectId:String} AND id IN {ids:Array(String)}',
      { ...project, ids: [...holding] },
      'erasure.delete_dead_letters',
    );
    await awaitDeletes(this.client, ['dead_letters'], project);
    await rewriteWithoutDeleted(this.client, [deleted], 'erasure.rewrite_dead_letters');
    return holding.size;
  }

  /** Marks them replayed (a newer version of each row; the payload stays for the record). */
  async markReplayed(letters: DeadLetter[], at: number): Promise<void> {
    await this.add(letters.map((letter) => ({ ...letter, replayedAt: at })));
  }
}

function toRow(letter: DeadLetter): DeadLetterRow {
  return {
    tenant_id: letter.tenantId,
    project_id: letter.projectId,
    id: letter.id,
    kind: letter.kind,
    reason: letter.reason,
    error: letter.error.slice(0, MAX_ERROR_LENGTH).toWellFormed(),
    export_id: letter.exportId,
    spans: letter.spans,
    payload: letter.payload.toWellFormed(),
    dead_lettered_at: timeText(letter.deadLetteredAt),
    replayed_at: letter.replayedAt === null ? null : timeText(letter.replayedAt),
    retention_days: letter.retentionDays,
  };
}

function fromRow(row: DeadLetterRow): DeadLetter {
  return {
    tenantId: row.tenant_id,
    projectId: row.project_id,
    id: row.id,
    kind: row.kind,
    reason: row.reason,
    error: row.error,
    exportId: row.export_id,
    spans: Number(row.spans),
    payload: row.payload,
    deadLetteredAt: msOf(row.dead_lettered_at),
    replayedAt: row.replayed_at === null ? null : msOf(row.replayed_at),
    retentionDays: Number(row.retention_days ?? 0),
  };
}
