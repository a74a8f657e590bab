import { analyseTrace, type TraceAnalysis } from '@spanforge/analysis';
import { DomainError, ErrorCode } from '@spanforge/errors';
import { TraceRepository, type SpanRecord } from '@spanforge/query';
import { projectClickHouse, type RequestContext } from '../graphql/request-context';
import type { TraceSource } from './trace.mapper';

/**
 * Per request and trace, the spans are read once whichever fields (spans, critical path, findings)
 * ask for them — and `trace` starts reading them while it reads the figures, when the query wants them.
 */
const loaded = new WeakMap<RequestContext, Map<string, Promise<SpanRecord[]>>>();
const analysed = new WeakMap<TraceSource, Promise<TraceAnalysis>>();

export async function repositoryFor(context: RequestContext): Promise<TraceRepository> {
  return new TraceRepository(await projectClickHouse(context));
}

/**
 * Span reads one request may make. The traces page caps itself at 50 traces when it asks for
 * per-trace fields, but aliases could repeat it; this bounds the request as a whole.
 */
export const MAX_TRACE_READS_PER_REQUEST = 200;

export function traceSpans(trace: { traceId: string; bounds: { start?: string; end?: string } }, context: RequestContext, withAttributes = false): Promise<SpanRecord[]> {
  let cache = loaded.get(context);
  if (!cache) loaded.set(context, (cache = new Map()));
  // Attributes make rows much larger: a request that shows them reads them, the others do not.
  const key = `${trace.traceId}|${withAttributes}`;
  let spans = cache.get(key);
  if (!spans) {
    if (cache.size >= MAX_TRACE_READS_PER_REQUEST) {
      return Promise.reject(
        new DomainError(ErrorCode.QUERY_TOO_EXPENSIVE, `this request reads the spans of more than ${MAX_TRACE_READS_PER_REQUEST} traces; ask for fewer traces' spans or analysis at once`),
      );
    }
    // Read by trace id alone (no days): the same read whether the figures came first or not.
    cache.set(key, (spans = repositoryFor(context).then((r) => r.spans(trace.traceId, undefined, undefined, withAttributes))));
  }
  return spans;
}

/**
 * libs/analysis over the trace's spans, once per trace and request. When the query asks for
 * loopSuspected or findings (`loopsAsked`), the tool calls' arguments are read too (a second,
 * narrow read: inputs can be large) with the project's median iterations, for the loop check.
 */
export function traceAnalysis(trace: TraceSource, context: RequestContext): Promise<TraceAnalysis> {
  let analysis = analysed.get(trace);
  if (!analysis) {
    const loops = trace.loopsAsked;
    analysis = (async () => {
      const repository = await repositoryFor(context);
      const [records, median, toolArguments] = await Promise.all([
        traceSpans(trace, context),
        loops ? repository.medianIterations(trace.bounds.start) : Promise.resolve(undefined),
        loops ? repository.toolArguments(trace.traceId) : Promise.resolve(new Map<string, string>()),
      ]);
      return analyseTrace(
        records.map((r) => ({
          spanId: r.span_id,
          parentSpanId: r.parent_span_id,
          name: r.name,
          type: r.span_type,
          startNs: BigInt(r.start_ns),
          endNs: BigInt(r.end_ns),
          status: r.status_code,
          toolName: r.tool_name || undefined,
          toolArguments: toolArguments.get(r.span_id),
        })),
        { iterations: trace.iterations, projectMedianIterations: median },
      );
    })();
    analysed.set(trace, analysis);
  }
  return analysis;
}
