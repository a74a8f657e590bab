// Loads @nestjs/common (ESM), so it runs with the integration tests' ESM support; it starts nothing (ClickHouse is a counting seam).
import { DEFAULT_QUERY_LIMITS, type AppConfig } from '@spanforge/config';
import { FairScheduler, type ClickHouseClient } from '@spanforge/clickhouse';
import { MAX_TRACE_READS_PER_REQUEST, TraceService } from '@spanforge/query';
import { DEFAULT_POLICY } from '@spanforge/policy';
import { ProjectPolicies } from '@spanforge/tenancy';
import { ProjectReads, type RequestContext } from './request-context';

/** The API's one ProjectReads, on a ClickHouse seam that answers every span read with no rows and counts them. */
function api(): { reads: ProjectReads; statements: () => number } {
  let statements = 0;
  const clickhouse = {
    query: async () => {
      statements++;
      return { text: async () => '' };
    },
  } as unknown as ClickHouseClient;
  const config = { queryLimits: DEFAULT_QUERY_LIMITS } as AppConfig;
  const policies = new ProjectPolicies({ find: async (projectId) => ({ projectId, policy: DEFAULT_POLICY, updatedAt: null }) });
  return { reads: new ProjectReads(clickhouse, config, new FairScheduler(1), new TraceService(), policies), statements: () => statements };
}

/** A new request's context, admitted to one project. */
function request(): RequestContext {
  const project = { tenantId: 't', projectId: 'p', apiKeyId: 'k', scopes: ['READ'] };
  return { caller: { kind: 'project', project }, project } as unknown as RequestContext;
}

const trace = (i: number) => i.toString(16).padStart(32, '0');

describe('ProjectReads', () => {
  it('makes one scoped ClickHouse and one trace reads per request', () => {
    const { reads } = api();
    const context = request();
    expect(reads.traces(context)).toBe(reads.traces(context));
    expect(reads.of(context)).toBe(reads.of(context));
    expect(reads.traces(request())).not.toBe(reads.traces(context));
  });

  it('reads a trace once per request, however many fields ask for it', async () => {
    const { reads, statements } = api();
    const context = request();
    await Promise.all([
      reads.traces(context).spans(trace(1)),
      reads.traces(context).spans(trace(1)),
      reads.traces(context).analysis({ traceId: trace(1) }),
      reads.traces(context).truncated(trace(1)),
    ]);
    expect(statements()).toBe(1);
  });

  it(`refuses the span read of a request's trace number ${MAX_TRACE_READS_PER_REQUEST + 1} as QUERY_TOO_EXPENSIVE, having read none of it`, async () => {
    const { reads, statements } = api();
    const context = request();
    const spansOf = (id: string, c: RequestContext) =>
      reads
        .traces(c)
        .spans(id)
        .then((read) => read.records);
    await Promise.all(Array.from({ length: MAX_TRACE_READS_PER_REQUEST }, (_, i) => spansOf(trace(i), context)));
    expect(statements()).toBe(MAX_TRACE_READS_PER_REQUEST);
    await expect(spansOf(trace(MAX_TRACE_READS_PER_REQUEST), context)).rejects.toMatchObject({ code: 'QUERY_TOO_EXPENSIVE' });
    expect(statements()).toBe(MAX_TRACE_READS_PER_REQUEST);
    // A trace already read is still answered.
    await expect(spansOf(trace(0), context)).resolves.toEqual([]);
    // Another request has its own budget.
    await expect(spansOf(trace(MAX_TRACE_READS_PER_REQUEST), request())).resolves.toEqual([]);
  });
});
