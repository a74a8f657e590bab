import { TraceService, type TraceReads } from '@spanforge/query';
import { projectClickHouse, type RequestContext } from '../graphql/request-context';

/** The API's trace rules and limits (libs/query TraceService); stateless, so one serves every request. */
export const TRACES = new TraceService();

/** Where a request's TraceReads lives: on its own context object, so it ends with the request. */
const READS = Symbol('spanforge.traceReads');
type WithTraceReads = RequestContext & { [READS]?: TraceReads };

/**
 * The trace reads of this GraphQL request (made on first use): each trace's spans read once and
 * analysed once whichever fields ask, and the request's span reads counted against its budget.
 */
export function traceReads(context: RequestContext): TraceReads {
  const holder = context as WithTraceReads;
  holder[READS] ??= TRACES.reads(projectClickHouse(context));
  return holder[READS];
}
