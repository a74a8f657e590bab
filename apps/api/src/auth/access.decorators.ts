import { SetMetadata, createParamDecorator, type ExecutionContext } from '@nestjs/common';
import { GqlExecutionContext } from '@nestjs/graphql';
import type { FastifyRequest } from 'fastify';
import type { ApiKeyScope, ProjectScope } from '@spanforge/tenancy';
import type { RequestContext } from '../graphql/request-context';

/** Who may call a resolver or a route; read by AccessGuard, which refuses any that declares none. */
export type AccessRule =
  | { kind: 'scope'; scope: ApiKeyScope }
  | { kind: 'adminOrScope'; scope: ApiKeyScope }
  | { kind: 'anyKey' }
  | { kind: 'admin' }
  | { kind: 'anyCaller' }
  | { kind: 'public' }
  | { kind: 'feedback' };

export const ACCESS_RULE = 'spanforge:access';

/** A project API key with this scope; the handler reads the project with @CurrentProject(). */
export const RequireScope = (scope: ApiKeyScope) => SetMetadata(ACCESS_RULE, { kind: 'scope', scope } satisfies AccessRule);
/**
 * The admin token (for any project), or a project API key with this scope (for its own project):
 * the handler takes the project as an argument and checks it with `projectArgument`.
 */
export const AdminOrScope = (scope: ApiKeyScope) => SetMetadata(ACCESS_RULE, { kind: 'adminOrScope', scope } satisfies AccessRule);
/** A project API key of any scope (e.g. to ask which project it is). */
export const AnyProjectKey = () => SetMetadata(ACCESS_RULE, { kind: 'anyKey' } satisfies AccessRule);
/** The admin token only. */
export const AdminOnly = () => SetMetadata(ACCESS_RULE, { kind: 'admin' } satisfies AccessRule);
/** A project API key of any scope or the admin token: what either may see alike (the GraphQL schema for the explorer). */
export const AnyCaller = () => SetMetadata(ACCESS_RULE, { kind: 'anyCaller' } satisfies AccessRule);
/** Anyone (health, readiness, metrics, the index page, the explorer's page and its scripts). */
export const Public = () => SetMetadata(ACCESS_RULE, { kind: 'public' } satisfies AccessRule);
/** A project API key with INGEST, or a browser's feedback token (checked by the handler against its trace and name). */
export const FeedbackAccess = () => SetMetadata(ACCESS_RULE, { kind: 'feedback' } satisfies AccessRule);

/** Where AccessGuard leaves the project it admitted, on the GraphQL context or the HTTP request. */
export interface AdmittedProject {
  project?: ProjectScope;
}

/** The project AccessGuard admitted the caller to (only on handlers with @RequireScope or @AnyProjectKey). */
export const CurrentProject = createParamDecorator((_data: unknown, context: ExecutionContext): ProjectScope => {
  const holder: AdmittedProject =
    context.getType<string>() === 'graphql'
      ? GqlExecutionContext.create(context).getContext<RequestContext>()
      : context.switchToHttp().getRequest<FastifyRequest>();
  if (!holder.project) throw new Error('@CurrentProject() on a handler without @RequireScope()');
  return holder.project;
});
