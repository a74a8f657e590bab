import { Inject, Injectable } from '@nestjs/common';
import type { AppConfig } from '@spanforge/config';
import { FairScheduler, type ClickHouseClient } from '@spanforge/clickhouse';
import { ScopedClickHouse, TraceService, type QueryScope, type TraceReads } from '@spanforge/query';
import { CLICKHOUSE, CONFIG } from '@spanforge/runtime';
import { ApiKeyScope, ProjectPolicies, projectWithScope, type Caller, type ProjectScope } from '@spanforge/tenancy';

/**
 * One GraphQL request's state: its caller, authenticated before the document is parsed
 * (api.server.ts), the project AccessGuard admitted it to, and what ProjectReads made for it. It
 * lives on the request's context object, so it ends with the request; the services that read
 * through it are singletons (Nest request-scoped providers would rebuild every resolver per request).
 */
export interface RequestContext {
  caller: Caller;
  /** The project AccessGuard admitted the caller to, for the request's root fields that need one. */
  project?: ProjectScope;
  /** The request's scoped ClickHouse, made once (every resolver of the request shares it). */
  db?: ScopedClickHouse;
  /** The request's trace reads: each trace's spans read and analysed once, whichever fields ask. */
  traces?: TraceReads;
}

/**
 * The only way the API reaches a project's data in ClickHouse: every statement scoped to one
 * project and to what its retention keeps, under the operator's query limits (QUERY_MAX_*), taking
 * turns with other projects.
 */
@Injectable()
export class ProjectReads {
  constructor(
    @Inject(CLICKHOUSE) private readonly clickhouse: ClickHouseClient,
    @Inject(CONFIG) private readonly config: AppConfig,
    private readonly querySlots: FairScheduler,
    readonly traceService: TraceService,
    private readonly policies: ProjectPolicies,
  ) {}

  /** A project's data for a REST route (AccessGuard made the scope). */
  forScope(scope: QueryScope): ScopedClickHouse {
    return new ScopedClickHouse(this.clickhouse, scope, this.config.queryLimits, this.querySlots, (projectId) =>
      this.policies.keptSince(projectId),
    );
  }

  /** The request's project's data: the project AccessGuard admitted (READ), or, failing that, refused. */
  of(context: RequestContext): ScopedClickHouse {
    context.db ??= this.forScope(context.project ?? projectWithScope(context.caller, ApiKeyScope.READ));
    return context.db;
  }

  /** The request's trace reads (made on first use), counted against the request's span-read budget. */
  traces(context: RequestContext): TraceReads {
    context.traces ??= this.traceService.reads(this.of(context));
    return context.traces;
  }
}
