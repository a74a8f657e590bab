import { DEFAULT_QUERY_LIMITS } from '@spanforge/config';
import { MAX_TRACE_READS_PER_REQUEST } from '@spanforge/query';
import type { RequestContext } from '../graphql/request-context';
import { traceReads } from './trace-reads';

/** A request whose ClickHouse answers every span read with no rows. */
function request(): { context: RequestContext; reads: () => number } {
  let reads = 0;
  const clickhouse = {
    query: async () => {
      reads++;
      return { json: async () => [] };
    },
  };
  const infra = { clickhouse, config: { queryLimits: DEFAULT_QUERY_LIMITS } };
  const project = { tenantId: 't', projectId: 'p', apiKeyId: 'k', scopes: ['READ'] };
  return { context: { caller: { kind: 'project', project }, project, infra } as unknown as RequestContext, reads: () => reads };
}

const trace = (i: number) => i.toString(16).padStart(32, '0');
const spansOf = (id: string, context: RequestContext) =>
  traceReads(context)
    .spans(id)
    .then((read) => read.records);

describe('traceReads', () => {
  it('is one object per request', () => {
    const { context } = request();
    expect(traceReads(context)).toBe(traceReads(context));
    expect(traceReads(request().context)).not.toBe(traceReads(context));
  });

  it('reads a trace once per request, however many fields ask for it', async () => {
    const { context, reads } = request();
    await Promise.all([
      spansOf(trace(1), context),
      spansOf(trace(1), context),
      traceReads(context).analysis({ traceId: trace(1) }),
      traceReads(context).truncated(trace(1)),
    ]);
    expect(reads()).toBe(1);
  });

  it(`refuses the span read of a request's trace number ${MAX_TRACE_READS_PER_REQUEST + 1} as QUERY_TOO_EXPENSIVE, having read none of it`, async () => {
    const { context, reads } = request();
    await Promise.all(Array.from({ length: MAX_TRACE_READS_PER_REQUEST }, (_, i) => spansOf(trace(i), context)));
    expect(reads()).toBe(MAX_TRACE_READS_PER_REQUEST);
    await expect(spansOf(trace(MAX_TRACE_READS_PER_REQUEST), context)).rejects.toMatchObject({ code: 'QUERY_TOO_EXPENSIVE' });
    expect(reads()).toBe(MAX_TRACE_READS_PER_REQUEST);
    // A trace already read is still answered.
    await expect(spansOf(trace(0), context)).resolves.toEqual([]);
    // Another request has its own budget.
    await expect(spansOf(trace(MAX_TRACE_READS_PER_REQUEST), request().context)).resolves.toEqual([]);
  });
});
