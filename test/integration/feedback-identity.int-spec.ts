import { buildCostReport } from '@spanforge/cost-reports';
import { FeedbackRepository, validateFeedback, type FeedbackInput } from '@spanforge/feedback';
import { graphql } from '../support';
import { sendAgentTrace } from './agent-trace';
import { startIngestHarness, type IngestHarness } from './ingest-harness';

const CALL = { model: 'gpt-4o-mini', provider: 'openai', input: 800, cacheRead: 0, output: 60 };
const DAY = 86_400_000;

type Score = { name: string; value: unknown; comment: string | null };
type SessionScore = { name: string; count: number; avg: number | null };

/**
 * A feedback id names one score of its project (docs/api.md, "POST /v1/feedback"): a re-send is
 * kept once whenever it comes, a correction replaces the score's value, and the id sent for
 * another trace or name is refused without touching any score.
 */
describe('feedback ids', () => {
  let h: IngestHarness;
  let api: string;
  let project: Awaited<ReturnType<IngestHarness['newProject']>>;
  /** Traces 0 and 1 in session s-a, 2 in s-b, 3 in s-c; all started `start`. */
  const traceIds: string[] = [];
  const start = Date.now() - DAY;

  const post = (body: Record<string, unknown>, key = project.apiKey) =>
    fetch(`${api}/v1/feedback`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${key}` },
      body: JSON.stringify(body),
    });
  const q = <T>(query: string, variables: Record<string, unknown> = {}, key = project.apiKey) => graphql<T>(api, query, variables, key);
  const traceFeedback = async (traceId: string, key = project.apiKey) =>
    (
      await q<{ trace: { feedback: Score[] } }>(
        'query($id: String!) { trace(traceId: $id) { feedback { name value comment } } }',
        { id: traceId },
        key,
      )
    ).data!.trace.feedback;
  const sessionFeedback = async (sessionId: string): Promise<SessionScore[]> => {
    const result = await q<{ sessions: { nodes: Array<{ sessionId: string; feedback: SessionScore[] }> } }>(
      '{ sessions { nodes { sessionId feedback { name count avg } } } }',
    );
    return result.data!.sessions.nodes.find((n) => n.sessionId === sessionId)!.feedback;
  };
  const byName = <T extends { name: string }>(rows: T[]) => [...rows].sort((a, b) => a.name.localeCompare(b.name));

  const sendTrace = (session: string) =>
    sendAgentTrace(h, project, { session, calls: [CALL], start: start + traceIds.length * 60_000 }, traceIds.length);

  beforeAll(async () => {
    h = await startIngestHarness();
    api = h.api;
    project = await h.newProject('feedback-ids');
    for (const session of ['s-a', 's-a', 's-b', 's-c']) traceIds.push(await sendTrace(session));
  });
  afterAll(() => h.stop());

  it('keeps one score when the same id is sent twice', async () => {
    const body = { traceId: traceIds[0], name: 'helpfulness', value: 4, comment: 'clear', id: 'twice-1' };
    for (let i = 0; i < 2; i++) {
      const response = await post(body);
      expect(response.status).toBe(202);
      expect(await response.json()).toEqual({ id: 'twice-1' });
    }
    expect(await traceFeedback(traceIds[0]!)).toEqual([{ name: 'helpfulness', value: 4, comment: 'clear' }]);
    expect(await sessionFeedback('s-a')).toEqual([{ name: 'helpfulness', count: 1, avg: 4 }]);
  });

  it('refuses an id sent again for another name or trace (409 CONFLICT) and leaves every score as it was', async () => {
    const sent = [
      { traceId: traceIds[2], name: 'helpfulness', value: 3, id: 'x' },
      { traceId: traceIds[2], name: 'accuracy', value: 5, id: 'other' },
    ];
    for (const body of sent) expect((await post(body)).status).toBe(202);
    const before = await traceFeedback(traceIds[2]!);

    const sameTraceOtherName = await post({ traceId: traceIds[2], name: 'accuracy', value: 1, id: 'x' });
    expect(sameTraceOtherName.status).toBe(409);
    expect(await sameTraceOtherName.json()).toEqual({
      error: { code: 'CONFLICT', message: expect.stringMatching(/score id "x" already names a score of another trace or name/) },
    });
    expect((await post({ traceId: traceIds[1], name: 'helpfulness', value: 1, id: 'x' })).status).toBe(409);
    const mutation = await q('mutation($i: FeedbackInput!) { submitFeedback(input: $i) { id } }', {
      i: { traceId: traceIds[2], name: 'tone', value: 'curt', id: 'x' },
    });
    expect(mutation.errors![0]!.extensions!.code).toBe('CONFLICT');

    const expected = sent.map(({ name, value }) => ({ name, value, comment: null }));
    expect(before).toEqual(expected);
    expect(await traceFeedback(traceIds[2]!)).toEqual(expected);
    expect(await traceFeedback(traceIds[1]!)).toEqual([]);
    expect(byName(await sessionFeedback('s-b'))).toEqual(
      sent.map(({ name, value }) => ({ name, count: 1, avg: value })).sort((a, b) => a.name.localeCompare(b.name)),
    );

    // The same id with its own trace and name corrects the score; no other score moves.
    expect((await post({ traceId: traceIds[2], name: 'helpfulness', value: 2, comment: 'on reflection', id: 'x' })).status).toBe(202);
    expect(await traceFeedback(traceIds[2]!)).toEqual([
      { name: 'helpfulness', value: 2, comment: 'on reflection' },
      { name: 'accuracy', value: 5, comment: null },
    ]);
    expect(byName(await sessionFeedback('s-b'))).toEqual([
      { name: 'accuracy', count: 1, avg: 5 },
      { name: 'helpfulness', count: 1, avg: 2 },
    ]);

    // Ids belong to their project: another project may use "x" for anything.
    const other = await h.newProject();
    expect((await post({ traceId: traceIds[2], name: 'accuracy', value: 1, id: 'x' }, other.apiKey)).status).toBe(202);
    expect(await traceFeedback(traceIds[2]!)).toHaveLength(2);
  });

  it('counts a score re-sent in a later month once in every read, at the time it was first received', async () => {
    const traceId = traceIds[3]!;
    const now = new Date();
    // Mid last month: another calendar month (and partition, in the table 006 made) than the re-send.
    const firstAt = Date.UTC(now.getUTCFullYear(), now.getUTCMonth() - 1, 15, 12);
    const scope = { tenantId: project.tenantId, projectId: project.projectId };
    const first: FeedbackInput = { traceId, name: 'quality', value: 2, id: 'monthly-1' };
    // The API cannot backdate: the first copy is written through the storage seam as the writer wrote it then.
    await new FeedbackRepository(h.services.clickhouse, h.services.pg).insert([
      { scope, record: validateFeedback(first, undefined), receivedAt: firstAt },
    ]);
    // Now: the same score again with a corrected value, and another score of the same name.
    const resent = { ...first, value: 4 };
    const another = { traceId, name: 'quality', value: 5, id: 'monthly-2' };
    for (const body of [resent, another]) expect((await post(body)).status).toBe(202);
    const values = [resent.value, another.value];
    const mean = values.reduce((a, b) => a + b, 0) / values.length;

    expect(await traceFeedback(traceId)).toEqual(values.map((value) => ({ name: 'quality', value, comment: null })));
    expect(await sessionFeedback('s-c')).toEqual([{ name: 'quality', count: values.length, avg: mean }]);

    const metrics = async (query: Record<string, unknown>) => {
      const answer = await q<{
        metrics: { series: Array<{ keys: string[]; points: Array<{ time: string; values: Array<number | null> }> }> };
      }>('query($q: MetricsQuery!) { metrics(query: $q) { series { keys points { time values } } } }', {
        q: { view: 'FEEDBACK', measures: ['COUNT', 'SCORE_AVG'], groupBy: ['SCORE_NAME'], ...query },
      });
      expect(answer.errors).toBeUndefined();
      return answer.data!.metrics.series.find((s) => s.keys[0] === 'quality')!.points;
    };
    const from = new Date(firstAt - DAY).toISOString();
    const to = new Date(Date.now() + 60_000).toISOString();
    expect(await metrics({ from, to })).toEqual([{ time: null, values: [values.length, mean] }]);
    // The corrected score stays at its first arrival, last month; the other score is today's.
    const days = await metrics({ from, to, granularity: 'DAY' });
    const dayOf = (ms: number) => new Date(Math.floor(ms / DAY) * DAY).toISOString();
    expect(days.filter((p) => p.values[0] !== 0)).toEqual([
      { time: dayOf(firstAt), values: [1, resent.value] },
      { time: dayOf(Date.now()), values: [1, another.value] },
    ]);

    // Filters and cost reports read the same scores.
    const traceCount = async (feedback: Record<string, unknown>) =>
      (await q<{ traces: { totalCount: number } }>('query($f: TraceFilter) { traces(filter: $f) { totalCount } }', { f: { feedback } }))
        .data!.traces.totalCount;
    expect(await traceCount({ name: 'quality', min: mean })).toBe(1);
    expect(await traceCount({ name: 'quality', max: mean - 0.01 })).toBe(0);
    const report = await buildCostReport(h.services.clickhouse, {
      ...scope,
      projectName: 'feedback-ids',
      scheduleId: null,
      window: { start: new Date(start - 3_600_000), end: new Date(Date.now() + 60_000) },
      timezone: 'UTC',
      groupBy: ['MODEL'],
      includeFeedback: true,
    });
    expect(report.topSessions.find((s) => s.sessionId === 's-c')!.feedback).toEqual([{ name: 'quality', count: values.length, avg: mean }]);

    // Stored once: merging the table leaves one row for the score (its copies share a partition).
    await h.services.clickhouse.command({ query: 'OPTIMIZE TABLE feedback FINAL' });
    const rows = await h.query<{ n: string }>(
      'SELECT count() AS n FROM feedback WHERE tenant_id = {t:String} AND project_id = {p:String} AND id = {id:String}',
      { t: project.tenantId, p: project.projectId, id: first.id },
    );
    expect(Number(rows[0]!.n)).toBe(1);
  });
});
