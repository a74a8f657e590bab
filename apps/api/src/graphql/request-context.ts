import type { Infrastructure } from '@spanforge/runtime';
import { ScopedClickHouse, type QueryScope } from '@spanforge/query';
import { ApiKeyScope, projectWithScope, type Caller, type ProjectScope } from '@spanforge/tenancy';

/** What a GraphQL request may do: its caller, authenticated before the document is parsed (api.server.ts). */
export interface RequestContext {
  caller: Caller;
  infra: Infrastructure;
  /** The project AccessGuard admitted the caller to, for the request's root fields that need one. */
  project?: ProjectScope;
  /** The request's scoped ClickHouse, made once (every resolver of the request shares it). */
  db?: ScopedClickHouse;
}

/** The API's way to ClickHouse for one project: every query scoped to it, under the operator's query limits, taking turns with other projects. */
export function scopedClickHouse(infra: Pick<Infrastructure, 'clickhouse' | 'config' | 'querySlots'>, scope: QueryScope): ScopedClickHouse {
  return new ScopedClickHouse(infra.clickhouse, scope, infra.config.queryLimits, infra.querySlots);
}

/**
 * The request's project's data, as the only way resolvers reach ClickHouse: every query it runs is
 * scoped to the project AccessGuard admitted (READ), or, failing that, refused.
 */
export function projectClickHouse(context: RequestContext): ScopedClickHouse {
  context.db ??= scopedClickHouse(context.infra, context.project ?? projectWithScope(context.caller, ApiKeyScope.READ));
  return context.db;
}
