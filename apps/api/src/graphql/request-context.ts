import type { FastifyRequest } from 'fastify';
import { DomainError, ErrorCode } from '@spanforge/errors';
import { tokensEqual, type ProjectScope } from '@spanforge/tenancy';
import type { Infrastructure } from '@spanforge/runtime';

/** What a GraphQL request may do, decided once per request from its bearer token. */
export interface RequestContext {
  bearer: string | undefined;
  infra: Infrastructure;
  scope?: Promise<ProjectScope | undefined>;
}

export function bearerOf(request: Pick<FastifyRequest, 'headers'>): string | undefined {
  const header = request.headers.authorization;
  if (typeof header === 'string') {
    const match = /^Bearer\s+(\S+)\s*$/i.exec(header);
    if (match) return match[1];
  }
  const apiKey = request.headers['x-api-key'];
  return typeof apiKey === 'string' && apiKey.trim() ? apiKey.trim() : undefined;
}

/** Admin mutations: one answer for a missing and a wrong token, so nothing is learned by probing. */
export function requireAdmin(context: RequestContext): void {
  const expected = context.infra.adminToken;
  if (!context.bearer || !expected || !tokensEqual(context.bearer, expected)) {
    throw new DomainError(ErrorCode.UNAUTHENTICATED, 'admin token required');
  }
}

export async function requireProject(context: RequestContext): Promise<ProjectScope> {
  context.scope ??= context.infra.keys.verify(context.bearer);
  const scope = await context.scope;
  if (!scope) throw new DomainError(ErrorCode.UNAUTHENTICATED, 'a valid project API key is required');
  return scope;
}
