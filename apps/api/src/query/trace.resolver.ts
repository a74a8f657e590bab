import { Args, Context, Float, Info, Int, Parent, Query, ResolveField, Resolver } from '@nestjs/graphql';
import type { GraphQLResolveInfo } from 'graphql';
import { FeedbackReadRepository, decodeCursor, encodeCursor, isoOf, pageSize, parentsFirst } from '@spanforge/query';
import { badInput, DomainError, ErrorCode } from '@spanforge/errors';
import { ApiKeyScope } from '@spanforge/tenancy';
import { RequireScope } from '../auth/access.decorators';
import { projectClickHouse, type RequestContext } from '../graphql/request-context';
import { CriticalPathStep, FeedbackScore, Finding, Span, SpanDetail, Trace, TraceConnection, TraceFilterInput } from './query.model';
import { repositoryFor, traceAnalysis, traceSpans } from './trace-analysis';
import { toSpan, toTrace, typedAttributes, type TraceSource } from './trace.mapper';
import { selectedFields } from './selection';

const TRACE_ID = /^[0-9a-f]{32}$/;
const ANALYSIS_FIELDS = ['criticalPath', 'unaccountedMs', 'parallelism', 'concurrency', 'retries', 'loopSuspected', 'findings'];
/** The analysis fields that need the tool calls' arguments. */
const LOOP_FIELDS = ['loopSuspected', 'findings'];
const SPAN_ID = /^[0-9a-f]{16}$/;
/** Per-trace fields that read each trace's spans or scores: a `traces` page asking for them is capped. */
const PER_TRACE_READS = ['spans', 'feedback', ...ANALYSIS_FIELDS];
export const MAX_TRACES_WITH_SPANS = 50;

function checkTraceId(traceId: string): string {
  const id = traceId.toLowerCase();
  if (!TRACE_ID.test(id)) throw badInput('traceId must be 32 hex characters');
  return id;
}

/** CONTRACT section 5: `trace`, `traces`; spans, critical path and analysis resolve only when asked. */
@RequireScope(ApiKeyScope.READ)
@Resolver(() => Trace)
export class TraceResolver {
  @Query(() => Trace, { nullable: true })
  async trace(@Args('traceId') traceId: string, @Context() context: RequestContext, @Info() info: GraphQLResolveInfo): Promise<TraceSource | null> {
    const traces = await repositoryFor(context);
    const id = checkTraceId(traceId);
    // The spans (when any field will need them) are read while the figures are.
    const prefetch = { traceId: id, bounds: { start: undefined, end: undefined } };
    const asked = selectedFields(info);
    if (asked.has('spans')) void traceSpans(prefetch, context, selectedFields(info, ['spans']).has('attributes')).catch(() => undefined);
    if (ANALYSIS_FIELDS.some((f) => asked.has(f))) void traceSpans(prefetch, context, false).catch(() => undefined);
    const loopsAsked = LOOP_FIELDS.some((f) => asked.has(f));
    const latest = await traces.latestFigures(id);
    if (latest) return toTrace(latest, loopsAsked);
    // Not recomputed yet (its first batch is being written): the rollup has the figures already.
    const bounds = await traces.bounds(id);
    const figures = bounds && (await traces.figures(id, bounds.start_time, bounds.end_time));
    return figures ? toTrace(figures, loopsAsked) : null;
  }

  @Query(() => TraceConnection)
  async traces(
    @Context() context: RequestContext,
    @Args('filter', { type: () => TraceFilterInput, nullable: true }) filter?: TraceFilterInput,
    @Args('first', { type: () => Int, nullable: true }) first?: number,
    @Args('after', { type: () => String, nullable: true }) after?: string,
    @Info() info?: GraphQLResolveInfo,
  ): Promise<TraceConnection> {
    const traces = await repositoryFor(context);
    const size = pageSize(first);
    const perNode = info ? selectedFields(info, ['nodes']) : new Set<string>();
    const heavy = PER_TRACE_READS.filter((f) => perNode.has(f));
    if (heavy.length > 0 && size > MAX_TRACES_WITH_SPANS) {
      throw new DomainError(
        ErrorCode.QUERY_TOO_EXPENSIVE,
        `traces asks for ${heavy.join(', ')} of each trace: at most ${MAX_TRACES_WITH_SPANS} traces a page then (first: ${MAX_TRACES_WITH_SPANS}), or ask for them with trace(traceId)`,
      );
    }
    const cursor = decodeCursor(after, ['string', 'string']) as [string, string] | undefined;
    const { rows, total } = await traces.page(filter, size, cursor);
    const loopsAsked = heavy.some((f) => LOOP_FIELDS.includes(f));
    const nodes = rows.slice(0, size).map((row) => toTrace(row, loopsAsked));
    const last = rows[Math.min(rows.length, size) - 1];
    return {
      nodes,
      totalCount: total,
      pageInfo: { hasNextPage: rows.length > size, endCursor: last ? encodeCursor([last.start_ns, last.trace_id]) : null },
    };
  }

  @Query(() => SpanDetail, { nullable: true, description: 'One span with its attributes, resource and message contents.' })
  async spanDetail(@Args('traceId') traceId: string, @Args('spanId') spanId: string, @Context() context: RequestContext): Promise<SpanDetail | null> {
    const traces = await repositoryFor(context);
    const id = checkTraceId(traceId);
    if (!SPAN_ID.test(spanId.toLowerCase())) throw badInput('spanId must be 16 hex characters');
    const bounds = await traces.bounds(id);
    if (!bounds) return null;
    const row = await traces.spanContent(id, spanId.toLowerCase(), bounds.start_time, bounds.end_time);
    if (!row) return null;
    return {
      spanId: row.span_id,
      attributes: typedAttributes(row.attributes, row.attribute_json_keys),
      resourceAttributes: row.resource_attributes,
      input: row.input || null,
      output: row.output || null,
      events: row.events_name
        .map((name, i) => ({ name, time: isoOf(row.events_time[i]!), attributes: { ...row.events_attributes[i] } }))
        .sort((a, b) => (a.time < b.time ? -1 : a.time > b.time ? 1 : 0)),
    };
  }

  @ResolveField(() => [Span])
  async spans(@Parent() trace: TraceSource, @Context() context: RequestContext, @Info() info: GraphQLResolveInfo): Promise<Span[]> {
    // Shown in start order, a parent before the children that start with it; the analysis and the
    // waterfall order the cached records themselves, so the copy is sorted here only.
    const records = parentsFirst([...(await traceSpans(trace, context, selectedFields(info).has('attributes')))]);
    return records.map((r) => toSpan(r, trace));
  }

  @ResolveField(() => [CriticalPathStep], {
    description:
      "The spans, root first, that determine the trace's wall time: from a span's end, back through the child that ended last before it, then through the earlier children that ended before that child started. Parallel siblings that end earlier are off the path.",
  })
  async criticalPath(@Parent() trace: TraceSource, @Context() context: RequestContext): Promise<CriticalPathStep[]> {
    return (await traceAnalysis(trace, context)).criticalPath.map((s) => ({ spanId: s.spanId, name: s.name, durationMs: s.durationMs, selfMs: s.selfMs }));
  }

  @ResolveField(() => Float, { description: "The root's duration not covered by any of its children (time in the root's own code or unseen waits)." })
  async unaccountedMs(@Parent() trace: TraceSource, @Context() context: RequestContext): Promise<number> {
    const analysis = await traceAnalysis(trace, context);
    // The critical path starts at the root.
    const root = trace.rootSpanId || analysis.criticalPath[0]?.spanId || '';
    return analysis.unaccountedMs.get(root) ?? 0;
  }

  @ResolveField(() => Float, {
    description: 'Sum of all span durations ÷ wall time. Nested spans count inside their parents too, so a sequential chain of three nested spans reads 3; `concurrency` reads 1 for any sequential trace.',
  })
  async parallelism(@Parent() trace: TraceSource, @Context() context: RequestContext): Promise<number> {
    return (await traceAnalysis(trace, context)).parallelism.overall;
  }

  @ResolveField(() => Float, {
    description: "How many spans were doing their own work at once, on average: each span's own time (its duration not covered by its children) summed, ÷ wall time. 1 is strictly sequential; 2 means two things ran side by side throughout.",
  })
  async concurrency(@Parent() trace: TraceSource, @Context() context: RequestContext): Promise<number> {
    return (await traceAnalysis(trace, context)).parallelism.concurrency;
  }

  @ResolveField(() => Int, { description: 'Failed LLM calls that a sibling call retried successfully.' })
  async retries(@Parent() trace: TraceSource, @Context() context: RequestContext): Promise<number> {
    return (await traceAnalysis(trace, context)).retries.failedAttempts;
  }

  @ResolveField(() => Boolean, { description: 'The same tool called ≥ 3 times with near-identical arguments, or iterations far over the project median.' })
  async loopSuspected(@Parent() trace: TraceSource, @Context() context: RequestContext): Promise<boolean> {
    return (await traceAnalysis(trace, context)).loop.suspected;
  }

  @ResolveField(() => [FeedbackScore], { description: 'Scores sent for this trace (or its spans), oldest first.' })
  async feedback(@Parent() trace: TraceSource, @Context() context: RequestContext): Promise<FeedbackScore[]> {
    const rows = await new FeedbackReadRepository(await projectClickHouse(context)).traceFeedback(trace.traceId);
    return rows.map((r) => ({
      name: r.name,
      value: r.data_type === 'NUMERIC' ? Number(r.value_number) : r.data_type === 'BOOLEAN' ? Number(r.value_number) === 1 : r.value_text,
      comment: r.comment || null,
    }));
  }

  @ResolveField(() => [Finding])
  async findings(@Parent() trace: TraceSource, @Context() context: RequestContext): Promise<Finding[]> {
    return (await traceAnalysis(trace, context)).findings.map((f) => ({ kind: f.kind, message: f.message, spanIds: f.spanIds }));
  }
}
