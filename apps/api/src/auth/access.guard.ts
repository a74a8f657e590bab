import { Injectable, type CanActivate, type ExecutionContext } from '@nestjs/common';
import { Reflector } from '@nestjs/core';
import { GqlExecutionContext } from '@nestjs/graphql';
import type { FastifyRequest } from 'fastify';
import type { GraphQLResolveInfo } from 'graphql';
import { DomainError, ErrorCode } from '@spanforge/errors';
import { Authenticator, projectWithScope, requireAdminCaller, type Caller } from '@spanforge/tenancy';
import type { RequestContext } from '../graphql/request-context';
import { ACCESS_RULE, type AccessRule } from './access.decorators';

/**
 * Every GraphQL root field and REST route declares who may call it (access.decorators.ts); this
 * guard enforces it, once per root field or request, and refuses a handler that declares nothing
 * (so a new one cannot be open by omission). Fields below the root were admitted with their root.
 */
@Injectable()
export class AccessGuard implements CanActivate {
  constructor(
    private readonly reflector: Reflector,
    private readonly authenticator: Authenticator,
  ) {}

  async canActivate(context: ExecutionContext): Promise<boolean> {
    const graphql = context.getType<string>() === 'graphql';
    if (graphql && !isRootField(context.getArgByIndex<GraphQLResolveInfo>(3))) return true;
    const rule = this.reflector.getAllAndOverride<AccessRule | undefined>(ACCESS_RULE, [context.getHandler(), context.getClass()]);
    if (!rule) throw new DomainError(ErrorCode.INTERNAL, `${context.getClass().name}.${context.getHandler().name} declares no access rule`);
    if (rule.kind === 'public' || rule.kind === 'feedback') return true;
    const holder = graphql
      ? GqlExecutionContext.create(context).getContext<RequestContext>()
      : context.switchToHttp().getRequest<FastifyRequest>();
    const caller = graphql ? (holder as RequestContext).caller : await callerOf(holder as FastifyRequest, this.authenticator);
    if (rule.kind === 'admin') requireAdminCaller(caller);
    else if (rule.kind === 'anyCaller') {
      if (caller.kind === 'anonymous')
        throw new DomainError(ErrorCode.UNAUTHENTICATED, 'a valid project API key or the admin token is required');
    } else if (rule.kind === 'anyKey') holder.project = projectWithScope(caller, undefined);
    else if (rule.kind === 'adminOrScope') {
      // The admin may name any project; a key only its own (the handler checks the argument).
      if (caller.kind !== 'admin') holder.project = projectWithScope(caller, rule.scope);
    } else holder.project = projectWithScope(caller, rule.scope);
    return true;
  }
}

function isRootField(info: GraphQLResolveInfo | undefined): boolean {
  const parent = info?.parentType.name;
  return parent === 'Query' || parent === 'Mutation';
}

/** The request's caller, authenticated once per request (GraphQL does it before parsing, see api.server.ts). */
export function callerOf(request: FastifyRequest, authenticator: Authenticator): Promise<Caller> {
  request.caller ??= authenticator.fromHeaders(request.headers);
  return request.caller;
}

declare module 'fastify' {
  interface FastifyRequest {
    /** Set by callerOf. */
    caller?: Promise<Caller>;
    /** Set by AccessGuard for routes with @RequireScope. */
    project?: import('@spanforge/tenancy').ProjectScope;
  }
}
