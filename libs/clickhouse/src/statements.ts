import { randomUUID } from 'node:crypto';
import { Readable } from 'node:stream';
import { finished } from 'node:stream/promises';
import type { ClickHouseClient } from '@clickhouse/client';
import { clickHouseErrorCode } from './clickhouse-errors';
import { projectTableFilters } from './project-tables';

/**
 * A statement's name as ClickHouse shows it: in its query id (`<name>:<uuid>`, what our metrics and
 * errors name) and in query_log's log_comment. Every statement of ours carries one.
 */
export function namedStatement(name: string): { query_id: string; clickhouse_settings: { log_comment: string } } {
  return { query_id: `${name}:${randomUUID()}`, clickhouse_settings: { log_comment: name } };
}

/**
 * What makes two `spans` rows copies of one span: the table's sorting key past the scope
 * (002_spans.sql); of the copies, the one with the greatest `ingested_at` is the span (what `FINAL`
 * keeps). The upkeep's span reads take the newest copy per this key themselves (`argMax` here,
 * `LIMIT 1 BY` in the rewrites) instead of asking for FINAL: under FINAL the engine skips no part by
 * a condition on a column outside the sorting key (a skipped part could hold a newer copy), and
 * their time bound (storedTracesTimeSql) holds every copy of their traces' spans, so the parts it skips
 * hold none of them.
 */
export const SPAN_COPY_KEY = 'toDate(start_time), trace_id, span_id';

/** One project of one tenant: whose data a project statement may read. */
export interface ProjectStatementScope {
  tenantId: string;
  projectId: string;
}

/**
 * A statement that reads one project's data (the worker's upkeep, feedback, dead letters) with the
 * project's table filters added to its SETTINGS clause (or given one): the engine confines it to
 * that project (projectTableFilters), so whatever its text it reads no other project's rows. With
 * `erasures`, it reads no row of an erased trace either (what the API sees).
 */
export function withProjectFilters(sql: string, scope: ProjectStatementScope, options: { erasures?: boolean } = {}): string {
  const statement = sql.trimEnd();
  const filters = projectTableFilters(scope, undefined, options);
  // A SETTINGS clause that ends the statement: name = value pairs, nothing nested after it.
  return /\bSETTINGS\s+\w+\s*=\s*[\w.']+(\s*,\s*\w+\s*=\s*[\w.']+)*$/.test(statement)
    ? `${statement}, ${filters}`
    : `${statement}\nSETTINGS ${filters}`;
}

/** About how many bytes of lines one chunk of an insert's stream carries. */
const STREAM_CHUNK_BYTES = 1024 * 1024;

/**
 * An insert's lines as its stream sends them: runs of byte lines joined into chunks of about
 * STREAM_CHUNK_BYTES, text lines as they are. Sent one a row, each chunk would take a round trip
 * to Node's thread pool through the client's gzip stream to a ClickHouse server (BENCHMARKS.md,
 * "Ingest", session 52); the embedded engine's rows file is written in writes of about a MiB
 * either way.
 */
function* streamChunks(lines: ReadonlyArray<string | Uint8Array>): Generator<string | Uint8Array> {
  let run: Uint8Array[] = [];
  let bytes = 0;
  for (const line of lines) {
    if (typeof line !== 'string') {
      run.push(line);
      bytes += line.byteLength;
      if (bytes < STREAM_CHUNK_BYTES) continue;
    }
    // A full run, or a text line: the run so far goes first.
    if (run.length > 0) yield Buffer.concat(run, bytes);
    run = [];
    bytes = 0;
    if (typeof line === 'string') yield line;
  }
  if (run.length > 0) yield Buffer.concat(run, bytes);
}

/**
 * Runs an `INSERT … FORMAT JSONEachRow` of lines already serialised (each ending in '\n'; text,
 * or UTF-8 bytes), as one insert. The answer to an INSERT has no rows, but it has to be read to
 * its end: a connection cut before then, or an exception ClickHouse writes into a response it
 * already started, means the insert may not have been stored. Such a failure propagates: without
 * a ClickHouse error code it counts as transient and the insert is retried (a copy stored twice
 * collapses), instead of the jobs being acknowledged for rows that may be missing.
 */
export async function insertLines(
  client: ClickHouseClient,
  query: string,
  lines: ReadonlyArray<string | Uint8Array>,
  name: string,
): Promise<void> {
  const result = await client.exec({ query, values: Readable.from(streamChunks(lines)), ...namedStatement(name) });
  result.stream.resume();
  await finished(result.stream);
}

/**
 * A DELETE as a lightweight update: a patch part masks the rows when the statement returns, with
 * no mutation (infra/clickhouse/018_lightweight_deletes.sql). Where a table cannot take patch
 * parts, the engine runs the DELETE as a mutation instead.
 */
const AS_PATCH = "lightweight_delete_mode = 'lightweight_update'";
const UNKNOWN_SETTING = 115;

/** A partition id as ClickHouse names it (`_partition_id`): digits, letters, `-` and `_`. */
const PARTITION_ID = /^[0-9A-Za-z_-]{1,128}$/;

/** What deleteInPartitions deleted from: a table's partitions, and whether as patch parts. */
export interface DeletedPartitions {
  table: string;
  partitions: string[];
  patched: boolean;
}

/**
 * Deletes the rows of `table` that meet `where` (with its bound parameters) by lightweight DELETEs
 * confined to the partitions that hold such rows: first one read of the matching rows' partition
 * ids, then one `DELETE … IN PARTITION ID` per partition. A DELETE of the whole table is a mutation
 * of every part of every partition; this one touches only the parts of the partitions named, and
 * nothing when no row matches.
 *
 * Each DELETE is a lightweight update (AS_PATCH): the rows are gone from every read when it
 * returns. Where it falls back to a mutation, it does not wait (`lightweight_deletes_sync = 0`):
 * the engine runs a mutation only when it has no merge to select for the table, tens of seconds
 * on a table of many partitions, and a waiting statement would hold an embedded engine's only
 * connection as long. awaitDeletes waits for such mutations (and returns at once when none);
 * rewriteWithoutDeleted then takes the rows off the disk.
 */
export async function deleteInPartitions(
  client: ClickHouseClient,
  table: string,
  where: string,
  params: Record<string, unknown>,
  name: string,
): Promise<DeletedPartitions> {
  const found = await client.query({
    query: `SELECT DISTINCT _partition_id AS partition FROM ${table} WHERE ${where}`,
    query_params: params,
    format: 'JSONEachRow',
    ...namedStatement(`${name}.partitions`),
  });
  const partitions = (await found.json<{ partition: string }>()).map((row) => row.partition).sort();
  let patched = true;
  for (const partition of partitions) {
    if (!PARTITION_ID.test(partition)) throw new Error(`not a partition id: ${JSON.stringify(partition)}`);
    const statement = `DELETE FROM ${table} IN PARTITION ID '${partition}' WHERE ${where} SETTINGS lightweight_deletes_sync = 0`;
    try {
      await client.command({ query: `${statement}, ${AS_PATCH}`, query_params: params, ...namedStatement(name) });
    } catch (error) {
      // A server older than lightweight updates: the same DELETE as a mutation.
      if (clickHouseErrorCode(error) !== UNKNOWN_SETTING) throw error;
      await client.command({ query: statement, query_params: params, ...namedStatement(name) });
      patched = false;
    }
  }
  return { table, partitions, patched };
}

/**
 * Takes deleted rows off the disk: reads apply a pending patch to every part it covers until a
 * merge applies it, and masked rows stay in the part files until one rewrites them, which an old
 * partition may not see for months. Per partition, `APPLY PATCHES` (for patch deletes) and
 * `APPLY DELETED MASK`, as mutations in the background that nothing waits for. Called once a
 * job's reads and writes are done, so the rewrites do not compete with them.
 */
export async function rewriteWithoutDeleted(client: ClickHouseClient, deleted: DeletedPartitions[], name: string): Promise<void> {
  for (const { table, partitions, patched } of deleted) {
    for (const partition of partitions) {
      if (!PARTITION_ID.test(partition)) throw new Error(`not a partition id: ${JSON.stringify(partition)}`);
      for (const step of patched ? ['APPLY PATCHES', 'APPLY DELETED MASK'] : ['APPLY DELETED MASK'])
        await client.command({
          query: `ALTER TABLE ${table} ${step} IN PARTITION ID '${partition}' SETTINGS mutations_sync = 0`,
          ...namedStatement(`${name}.${step.toLowerCase().replaceAll(' ', '_')}`),
        });
    }
  }
}

interface PendingMutation {
  table: string;
  mutation_id: string;
  parts_to_do: string;
  latest_fail_reason: string;
}

/**
 * Waits until the engine has applied every DELETE of `scope`'s rows issued so far in `tables`
 * (deleteInPartitions): no unfinished mutation of those tables names the project. Throws after
 * `timeoutMs` with what is still pending and why (a mutation that keeps failing says its reason).
 * On a cluster this sees the replica it asks; deletes there are for the operator's own tooling.
 *
 * Asked after every delete, also one sent as a patch (`lightweight_update`): where a patch is not
 * possible (a table rebuilt without the block number and offset columns, a part written before
 * them), the engine runs the same DELETE as a mutation without saying so, and only
 * system.mutations shows it. Skipping the poll for patched deletes was tried and failed the CI
 * (a rebuild read rows the mutation had not removed yet).
 */
export async function awaitDeletes(
  client: ClickHouseClient,
  tables: string[],
  scope: ProjectStatementScope,
  options: { timeoutMs?: number; pollMs?: number } = {},
): Promise<void> {
  if (tables.length === 0) return;
  const deadline = Date.now() + (options.timeoutMs ?? 30 * 60_000);
  for (;;) {
    const result = await client.query({
      query: `SELECT table, mutation_id, toString(parts_to_do) AS parts_to_do, latest_fail_reason FROM system.mutations
              WHERE database = currentDatabase() AND table IN {tables:Array(String)} AND is_done = 0
                AND position(command, {projectId:String}) > 0 AND position(command, {tenantId:String}) > 0`,
      query_params: { tables, tenantId: scope.tenantId, projectId: scope.projectId },
      format: 'JSONEachRow',
      ...namedStatement('mutations.pending_deletes'),
    });
    const pending = await result.json<PendingMutation>();
    if (pending.length === 0) return;
    if (Date.now() >= deadline) {
      const described = pending.map(
        (m) =>
          `${m.table} ${m.mutation_id} (${m.parts_to_do} part(s) to do${m.latest_fail_reason ? `; last failure: ${m.latest_fail_reason}` : ''})`,
      );
      throw new Error(`deletes not applied after ${options.timeoutMs ?? 30 * 60_000} ms: ${described.join(', ')}`);
    }
    await new Promise((resolve) => setTimeout(resolve, options.pollMs ?? 500));
  }
}
