import { Args, Context, Float, Info, Int, Parent, Query, ResolveField, Resolver } from '@nestjs/graphql';
import type { GraphQLResolveInfo } from 'graphql';
import {
  FeedbackReadRepository,
  MAX_SPANS_PER_READ,
  decodeCursor,
  encodeCursor,
  isoOf,
  pageSize,
  parentsFirst,
  parseSpanId,
  parseTraceId,
  spansShowGenAi,
  type TraceFacts,
} from '@spanforge/query';
import { DomainError, ErrorCode } from '@spanforge/errors';
import { ApiKeyScope } from '@spanforge/tenancy';
import { RequireScope } from '../auth/access.decorators';
import { ProjectReads, type RequestContext } from '../graphql/request-context';
import { CriticalPathStep, FeedbackScore, Finding, Span, SpanDetail, Trace, TraceConnection, TraceFilterInput } from './query.model';
import { toSpan, toTrace, typedAttributes, type TraceSource } from './trace.mapper';
import { selectedFields, selectedWithoutArguments } from './selection';

const ANALYSIS_FIELDS = ['criticalPath', 'unaccountedMs', 'parallelism', 'concurrency', 'retries', 'loopSuspected', 'findings'];
/** The analysis fields that need the tool calls' arguments. */
const LOOP_FIELDS = ['loopSuspected', 'findings'];
/** Per-trace fields that read each trace's spans or scores: a `traces` page asking for them is capped. */
const PER_TRACE_READS = ['spans', 'spansTruncated', 'feedback', ...ANALYSIS_FIELDS];
export const MAX_TRACES_WITH_SPANS = 50;

/** What TraceService's analysis needs to know of a trace shown by GraphQL. */
const factsOf = (trace: TraceSource): TraceFacts => ({
  traceId: trace.traceId,
  iterations: trace.iterations,
  startTime: trace.bounds.start,
});

/** `trace`, `traces`, `spanDetail`; spans, critical path and analysis resolve only when asked. */
@RequireScope(ApiKeyScope.READ)
@Resolver(() => Trace)
export class TraceResolver {
  constructor(private readonly reads: ProjectReads) {}

  @Query(() => Trace, { nullable: true, description: 'One trace of the project; null when it has no such trace.' })
  async trace(
    @Args('traceId', { description: 'The trace id, 32 hex characters (either case).' }) traceId: string,
    @Context() context: RequestContext,
    @Info() info: GraphQLResolveInfo,
  ): Promise<TraceSource | null> {
    const reads = this.reads.traces(context);
    const id = parseTraceId(traceId);
    // The spans (when a field will need the capped read) are read while the figures are.
    const asked = selectedFields(info);
    const spans = selectedWithoutArguments(info, 'spans');
    if (spans) prefetch(reads.spans(id, spans.has('attributes')));
    if (ANALYSIS_FIELDS.some((f) => asked.has(f))) prefetch(reads.spans(id, false));
    // After those: answered from a read made above, or counted meanwhile.
    if (asked.has('spansTruncated')) prefetch(reads.truncated(id));
    const figures = await reads.figures(id);
    return figures
      ? toTrace(
          figures,
          LOOP_FIELDS.some((f) => asked.has(f)),
        )
      : null;
  }

  @Query(() => TraceConnection, { description: 'Traces, latest start first, a page at a time.' })
  async traces(
    @Context() context: RequestContext,
    @Args('filter', { type: () => TraceFilterInput, nullable: true, description: 'The traces listed; absent: all.' })
    filter?: TraceFilterInput,
    @Args('first', {
      type: () => Int,
      nullable: true,
      description: `Page size, 1 to 200 (at most ${MAX_TRACES_WITH_SPANS} when spans, feedback or an analysis field of each trace is asked for); absent: 20.`,
    })
    first?: number,
    @Args('after', { type: () => String, nullable: true, description: 'pageInfo.endCursor of the previous page; absent: the first page.' })
    after?: string,
    @Info() info?: GraphQLResolveInfo,
  ): Promise<TraceConnection> {
    const reads = this.reads.traces(context);
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
    // The total is a second read of every matching trace: made only when asked for.
    const counted = !info || selectedFields(info).has('totalCount');
    const { rows, total } = await reads.tracesPage(filter, size, cursor, counted);
    const loopsAsked = heavy.some((f) => LOOP_FIELDS.includes(f));
    const nodes = rows.slice(0, size).map((row) => toTrace(row, loopsAsked));
    const last = rows[Math.min(rows.length, size) - 1];
    return {
      nodes,
      // Not asked for (not counted): never sent.
      totalCount: total ?? 0,
      pageInfo: { hasNextPage: rows.length > size, endCursor: last ? encodeCursor([last.start_ns, last.trace_id]) : null },
    };
  }

  @Query(() => SpanDetail, {
    nullable: true,
    description: 'One span with its attributes, resource and message contents; null when the project has no such span.',
  })
  async spanDetail(
    @Args('traceId', { description: 'The trace id, 32 hex characters.' }) traceId: string,
    @Args('spanId', { description: 'The span id, 16 hex characters.' }) spanId: string,
    @Context() context: RequestContext,
  ): Promise<SpanDetail | null> {
    const reads = this.reads.traces(context);
    const row = await reads.spanContent(parseTraceId(traceId), parseSpanId(spanId));
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

  @ResolveField(() => [Span], {
    description: `The trace's spans. Without arguments: its first ${MAX_SPANS_PER_READ.toLocaleString('en-US')} in start order, a parent before the children that start with it (spansTruncated says whether there are more). With \`first\` (1 to ${MAX_SPANS_PER_READ.toLocaleString('en-US')}) or \`after\` (a span's \`cursor\`): a page in (start time, span id) order.`,
  })
  async spans(
    @Parent() trace: TraceSource,
    @Context() context: RequestContext,
    @Info() info: GraphQLResolveInfo,
    @Args('first', {
      type: () => Int,
      nullable: true,
      description: `Page size, 1 to ${MAX_SPANS_PER_READ.toLocaleString('en-US')}; absent with after given: ${MAX_SPANS_PER_READ.toLocaleString('en-US')}.`,
    })
    first?: number | null,
    @Args('after', { type: () => String, nullable: true, description: 'The cursor of the last span of the previous page (Span.cursor).' })
    after?: string | null,
  ): Promise<Span[]> {
    const reads = this.reads.traces(context);
    const withAttributes = selectedFields(info).has('attributes');
    if ((first === undefined || first === null) && (after === undefined || after === null)) {
      const read = await reads.spans(trace.traceId, withAttributes);
      const genAi = trace.genAi || spansShowGenAi(read.records);
      // Shown in start order, a parent before the children that start with it; the analysis and the
      // waterfall use the cached records as read, so the copy is sorted here only.
      return parentsFirst([...read.records]).map((r) => toSpan(r, genAi));
    }
    const page = await reads.page(trace.traceId, { first, after, withAttributes });
    const genAi = trace.genAi || spansShowGenAi(page.records);
    return page.records.map((r) => toSpan(r, genAi));
  }

  @ResolveField(() => Boolean, {
    description: `Whether the trace has more spans than \`spans\` without arguments returns (${MAX_SPANS_PER_READ.toLocaleString('en-US')}), and the analysis fields see: page through them with \`spans(first, after)\`.`,
  })
  async spansTruncated(@Parent() trace: TraceSource, @Context() context: RequestContext): Promise<boolean> {
    return this.reads.traces(context).truncated(trace.traceId);
  }

  @ResolveField(() => [CriticalPathStep], {
    description:
      "The spans, root first, that determine the trace's wall time: from a span's end, back through the child that ended last before it, then through the earlier children that ended before that child started. Parallel siblings that end earlier are off the path.",
  })
  async criticalPath(@Parent() trace: TraceSource, @Context() context: RequestContext): Promise<CriticalPathStep[]> {
    return (await this.reads.traces(context).analysis(factsOf(trace), trace.loopsAsked)).criticalPath.map((s) => ({
      spanId: s.spanId,
      name: s.name,
      durationMs: s.durationMs,
      selfMs: s.selfMs,
    }));
  }

  @ResolveField(() => Float, {
    description: "The root's duration not covered by any of its children (time in the root's own code or unseen waits).",
  })
  async unaccountedMs(@Parent() trace: TraceSource, @Context() context: RequestContext): Promise<number> {
    const analysis = await this.reads.traces(context).analysis(factsOf(trace), trace.loopsAsked);
    // The critical path starts at the root.
    const root = trace.rootSpanId || analysis.criticalPath[0]?.spanId || '';
    return analysis.unaccountedMs.get(root) ?? 0;
  }

  @ResolveField(() => Float, {
    description:
      'Sum of all span durations ÷ wall time. Nested spans count inside their parents too, so a sequential chain of three nested spans reads 3; `concurrency` reads 1 for any sequential trace.',
  })
  async parallelism(@Parent() trace: TraceSource, @Context() context: RequestContext): Promise<number> {
    return (await this.reads.traces(context).analysis(factsOf(trace), trace.loopsAsked)).parallelism.overall;
  }

  @ResolveField(() => Float, {
    description:
      "How many spans were doing their own work at once, on average: each span's own time (its duration not covered by its children) summed, ÷ wall time. 1 is strictly sequential; 2 means two things ran side by side throughout.",
  })
  async concurrency(@Parent() trace: TraceSource, @Context() context: RequestContext): Promise<number> {
    return (await this.reads.traces(context).analysis(factsOf(trace), trace.loopsAsked)).parallelism.concurrency;
  }

  @ResolveField(() => Int, { description: 'Failed LLM calls that a sibling call retried successfully.' })
  async retries(@Parent() trace: TraceSource, @Context() context: RequestContext): Promise<number> {
    return (await this.reads.traces(context).analysis(factsOf(trace), trace.loopsAsked)).retries.failedAttempts;
  }

  @ResolveField(() => Boolean, {
    description: 'The same tool called ≥ 3 times with near-identical arguments, or iterations far over the project median.',
  })
  async loopSuspected(@Parent() trace: TraceSource, @Context() context: RequestContext): Promise<boolean> {
    return (await this.reads.traces(context).analysis(factsOf(trace), trace.loopsAsked)).loop.suspected;
  }

  @ResolveField(() => [FeedbackScore], { description: 'Scores sent for this trace (or its spans), oldest first.' })
  async feedback(@Parent() trace: TraceSource, @Context() context: RequestContext): Promise<FeedbackScore[]> {
    const rows = await new FeedbackReadRepository(this.reads.of(context)).traceFeedback(trace.traceId);
    return rows.map((r) => ({
      name: r.name,
      value: r.data_type === 'NUMERIC' ? Number(r.value_number) : r.data_type === 'BOOLEAN' ? Number(r.value_number) === 1 : r.value_text,
      comment: r.comment || null,
    }));
  }

  @ResolveField(() => [Finding], {
    description:
      'What stands out in the trace (CRITICAL_PATH_DOMINATED_BY, UNACCOUNTED_TIME, RETRY, LOOP, N_PLUS_ONE, LOW_PARALLELISM). SPANS_TRUNCATED, first, when the trace has more spans than one read returns: the analysis fields then cover its first spans in start order only.',
  })
  async findings(@Parent() trace: TraceSource, @Context() context: RequestContext): Promise<Finding[]> {
    return (await this.reads.traces(context).analysis(factsOf(trace), trace.loopsAsked)).findings.map((f) => ({
      kind: f.kind,
      message: f.message,
      spanIds: f.spanIds,
    }));
  }
}

/**
 * Starts a read a field will need, early. Its failure is reported where it matters: the field
 * resolver awaits the same (cached) read and fails with it; here it must only not be unhandled.
 */
function prefetch(read: Promise<unknown>): void {
  read.catch(reportedByTheFieldThatAwaitsIt);
}

function reportedByTheFieldThatAwaitsIt(): void {
  // Intentionally empty: see prefetch.
}
