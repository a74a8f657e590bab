import type { FastifyRequest } from 'fastify';
import { DomainError, ErrorCode } from '@spanforge/errors';
import { credentialFrom, tokensEqual, type ProjectScope } from '@spanforge/tenancy';
import type { Infrastructure } from '@spanforge/runtime';
import { ScopedClickHouse, type QueryScope } from '@spanforge/query';

/** What a GraphQL request may do, decided once per request from its bearer token. */
export interface RequestContext {
  bearer: string | undefined;
  infra: Infrastructure;
  scope?: Promise<ProjectScope | undefined>;
  /** The request's scoped ClickHouse, made once (every resolver of the request shares it). */
  db?: Promise<ScopedClickHouse>;
}

export function bearerOf(request: Pick<FastifyRequest, 'headers'>): string | undefined {
  return credentialFrom(request.headers.authorization, request.headers['x-api-key']);
}

/**
 * Admin mutations: one answer for a missing and a wrong token, so nothing is learned by probing;
 * a valid project API key is a known caller without the right, so FORBIDDEN.
 */
function bearsAdminToken(context: RequestContext): boolean {
  const expected = context.infra.adminToken;
  return !!context.bearer && !!expected && tokensEqual(context.bearer, expected);
}

export async function requireAdmin(context: RequestContext): Promise<void> {
  if (bearsAdminToken(context)) return;
  if (await requireProject(context).catch(() => undefined)) {
    throw new DomainError(ErrorCode.FORBIDDEN, 'admin token required: a project API key cannot manage tenants, projects or keys');
  }
  throw new DomainError(ErrorCode.UNAUTHENTICATED, 'admin token required');
}

export async function requireProject(context: RequestContext): Promise<ProjectScope> {
  context.scope ??= context.infra.keys.verify(context.bearer);
  const scope = await context.scope;
  if (!scope) {
    if (bearsAdminToken(context)) {
      throw new DomainError(ErrorCode.UNAUTHENTICATED, "a project API key is required: the admin token manages tenants, projects and keys, and reads no project's data");
    }
    throw new DomainError(ErrorCode.UNAUTHENTICATED, 'a valid project API key is required');
  }
  return scope;
}

/** The API's way to ClickHouse for one project: every query scoped to it, under the operator's query limits. */
export function scopedClickHouse(infra: Pick<Infrastructure, 'clickhouse' | 'config'>, scope: QueryScope): ScopedClickHouse {
  return new ScopedClickHouse(infra.clickhouse, scope, infra.config.queryLimits);
}

/** The request's project, as the only way resolvers reach ClickHouse: every query it runs is scoped to it. */
export function projectClickHouse(context: RequestContext): Promise<ScopedClickHouse> {
  context.db ??= requireProject(context).then((scope) => scopedClickHouse(context.infra, scope));
  return context.db;
}
