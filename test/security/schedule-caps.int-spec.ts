import { MAX_SCHEDULES_PER_PROJECT } from '@spanforge/cost-reports';
import { graphql } from '../support';
import { startIngestHarness, type IngestHarness } from '../integration/ingest-harness';

/*
 * Report schedules share a few worker slots between every project: one project may not have more
 * than MAX_SCHEDULES_PER_PROJECT of them, nor one that fires more often than every 15 minutes.
 */

const CREATE = 'mutation($i: CostReportScheduleInput!) { createCostReportSchedule(input: $i) { schedule { id } } }';

describe('cost report schedules per project', () => {
  let h: IngestHarness;
  let api: string;

  beforeAll(async () => {
    h = await startIngestHarness({ ALLOW_PRIVATE_WEBHOOKS: 'true' });
    api = h.api;
  });
  afterAll(() => h?.stop());

  const schedule = (cron: string) => ({ cron, timezone: 'UTC', window: 'P1D', groupBy: ['MODEL'], webhookUrl: 'http://127.0.0.1:9/hook' });

  it('refuses a schedule that fires more often than every 15 minutes, saying how often it would', async () => {
    const project = await h.newProject('frequent');
    const answer = await graphql(api, CREATE, { i: schedule('*/5 * * * *') }, project.apiKey);
    expect(answer.errors?.[0]?.extensions?.code).toBe('BAD_USER_INPUT');
    expect(answer.errors?.[0]?.message).toMatch(/fires every 5 minute\(s\).*at most every 15 minutes/);
  });

  it(`refuses the schedule past ${MAX_SCHEDULES_PER_PROJECT} of one project, and not another project's`, async () => {
    const [full, other] = [await h.newProject('many'), await h.newProject('few')];
    for (let i = 0; i < MAX_SCHEDULES_PER_PROJECT; i++) {
      const created = await graphql(api, CREATE, { i: schedule(`${i} 9 * * *`) }, full.apiKey);
      expect(created.errors).toBeUndefined();
    }
    const refused = await graphql(api, CREATE, { i: schedule('30 10 * * *') }, full.apiKey);
    expect(refused.errors?.[0]?.message).toMatch(
      new RegExp(`has ${MAX_SCHEDULES_PER_PROJECT} cost report schedules, the most it may have`),
    );
    expect((await graphql(api, CREATE, { i: schedule('30 10 * * *') }, other.apiKey)).errors).toBeUndefined();
  });
});
