import { randomUUID } from 'node:crypto';
import { Readable } from 'node:stream';
import { finished } from 'node:stream/promises';
import type { ClickHouseClient } from '@clickhouse/client';
import { projectTableFilters } from './project-tables';

/**
 * A statement's name as ClickHouse shows it: in its query id (`<name>:<uuid>`, what our metrics and
 * errors name) and in query_log's log_comment. Every statement of ours carries one.
 */
export function namedStatement(name: string): { query_id: string; clickhouse_settings: { log_comment: string } } {
  return { query_id: `${name}:${randomUUID()}`, clickhouse_settings: { log_comment: name } };
}

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

/**
 * Runs an `INSERT … FORMAT JSONEachRow` of lines already serialised (each ending in '\n'), as one
 * insert. The answer to an INSERT has no rows, but it has to be read to its end: a connection cut
 * before then, or an exception ClickHouse writes into a response it already started, means the
 * insert may not have been stored. Such a failure propagates: without a ClickHouse error code it
 * counts as transient and the insert is retried (a copy stored twice collapses), instead of the
 * jobs being acknowledged for rows that may be missing.
 */
export async function insertLines(client: ClickHouseClient, query: string, lines: string[], name: string): Promise<void> {
  const result = await client.exec({ query, values: Readable.from(lines), ...namedStatement(name) });
  result.stream.resume();
  await finished(result.stream);
}
