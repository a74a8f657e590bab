import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { COST_REPORTS_QUEUE, CostReportJobName, FIRE_JOB_OPTIONS, deliveryJobId, type CostReportJob } from '@spanforge/queue';
import { graphql, testRedisUrl } from '../support';
import { startIngestHarness, type IngestHarness } from './ingest-harness';

/*
 * Fair turns between projects at the report workers: one project whose schedules all fire at once
 * and whose webhook is slow holds one of a worker's report slots, not all of them, so another
 * project's report goes out meanwhile; the deferred jobs all run later, each once, using no attempt.
 */

/** How long the receiver takes to answer: slow, within the 10 s delivery limit. */
const ANSWER_AFTER_MS = 2_500;
/** Project A's schedules, all firing at the same minute. */
const A_SCHEDULES = 8;

interface Received {
  project: 'a' | 'b';
  reportId: string;
  arrivedAt: number;
  answeredAt?: number;
}

/** A webhook receiver on loopback that answers every delivery after ANSWER_AFTER_MS; `/a` and `/b` tell the projects apart. */
async function startSlowReceiver() {
  const received: Received[] = [];
  const inFlight = { a: 0, b: 0 };
  const maxInFlight = { a: 0, b: 0 };
  const server = http.createServer((request, response) => {
    request.resume();
    request.on('end', () => {
      const project = request.url === '/a' ? 'a' : 'b';
      const delivery: Received = { project, reportId: String(request.headers['spanforge-report-id']), arrivedAt: Date.now() };
      received.push(delivery);
      maxInFlight[project] = Math.max(maxInFlight[project], ++inFlight[project]);
      setTimeout(() => {
        inFlight[project]--;
        delivery.answeredAt = Date.now();
        response.writeHead(204).end();
      }, ANSWER_AFTER_MS);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    url,
    received,
    maxInFlight,
    close: () => new Promise<void>((resolve) => (server.closeAllConnections(), server.close(() => resolve()))),
  };
}

async function waitFor(condition: () => boolean | Promise<boolean>, what: string, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await condition())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

const CREATE = 'mutation($i: CostReportScheduleInput!) { createCostReportSchedule(input: $i) { schedule { id } } }';

/** Both queue backends: moving and promoting a job are the backend's own operations. */
const lanes: Array<[string, () => Record<string, string> | undefined]> = [
  ['postgres', () => ({})],
  ['redis', () => (testRedisUrl() ? { REDIS_URL: testRedisUrl()! } : undefined)],
];

describe.each(lanes)('fair turns between projects at the report workers (BullMQ on %s)', (kind, backend) => {
  let h: IngestHarness | undefined;
  let receiver: Awaited<ReturnType<typeof startSlowReceiver>>;

  beforeAll(async () => {
    const settings = backend();
    if (!settings) return void process.stderr.write(`SKIPPED: the ${kind} queue lane (redis-server not installed; CI always runs it)\n`);
    h = await startIngestHarness({ ALLOW_PRIVATE_WEBHOOKS: 'true', ...settings });
    receiver = await startSlowReceiver();
  });
  afterAll(async () => {
    await h?.stop();
    await receiver?.close();
  });

  /** Schedules of the project, each with exactly one window due now (created a day ago, firing daily). */
  async function schedules(apiKey: string, count: number, webhookUrl: string): Promise<string[]> {
    const ids: string[] = [];
    for (let i = 0; i < count; i++) {
      const created = await graphql<{ createCostReportSchedule: { schedule: { id: string } } }>(
        h!.api,
        CREATE,
        { i: { cron: `${i} 9 * * *`, timezone: 'UTC', window: 'P1D', groupBy: ['MODEL'], webhookUrl } },
        apiKey,
      );
      expect(created.errors).toBeUndefined();
      ids.push(created.data!.createCostReportSchedule.schedule.id);
    }
    await h!.services.pg.query("UPDATE cost_report_schedules SET created_at = now() - interval '1 day' WHERE id = ANY($1::uuid[])", [ids]);
    return ids;
  }

  it("delivers another project's report while one project's many slow reports are worked through, each of them once", async () => {
    if (!h) return;
    const { services } = h;
    const [a, b] = [await h.newProject('fair-a'), await h.newProject('fair-b')];
    const aSchedules = await schedules(a.apiKey, A_SCHEDULES, `${receiver.url}/a`);
    const [bSchedule] = await schedules(b.apiKey, 1, `${receiver.url}/b`);

    // Jobs as an older version queued them, without the project: every other firing, and every
    // other delivery the firings queue (the service's queue is the seam).
    const queue = services.queues.queue<CostReportJob>(COST_REPORTS_QUEUE);
    const producer = (services.costReports as unknown as { deps: { queue: { add: (...a: unknown[]) => Promise<unknown> } } }).deps.queue;
    const add = producer.add.bind(producer);
    let deliveries = 0;
    producer.add = (name, data, opts) =>
      add(
        name,
        name === CostReportJobName.Deliver && deliveries++ % 2 === 0 ? { reportId: (data as { reportId: string }).reportId } : data,
        opts,
      );
    try {
      // A's schedules all fire at the same minute, then B's.
      const fire = (scheduleId: string, projectId: string | undefined) => ({
        name: CostReportJobName.Fire,
        data: projectId ? { scheduleId, projectId } : { scheduleId },
        opts: { ...FIRE_JOB_OPTIONS, jobId: `fairness-${scheduleId}` },
      });
      await queue.addBulk(aSchedules.map((id, i) => fire(id, i % 2 === 0 ? a.projectId : undefined)));
      const bFire = fire(bSchedule!, b.projectId);
      await queue.add(bFire.name, bFire.data, bFire.opts);

      const reportsOf = async (projectId: string) =>
        (
          await services.pg.query<{ id: string; delivery_status: string; delivery_attempts: number }>(
            'SELECT id, delivery_status, delivery_attempts FROM cost_reports WHERE project_id = $1',
            [projectId],
          )
        ).rows;
      await waitFor(
        async () => {
          const reports = [...(await reportsOf(a.projectId)), ...(await reportsOf(b.projectId))];
          return reports.length >= A_SCHEDULES + 1 && reports.every((r) => r.delivery_status === 'delivered');
        },
        'every report of A and B delivered',
        // A's deliveries one after another, each answered after ANSWER_AFTER_MS, with room for a slow machine.
        A_SCHEDULES * ANSWER_AFTER_MS * 4,
      );

      const [aReports, bReports] = [await reportsOf(a.projectId), await reportsOf(b.projectId)];
      const received = (project: 'a' | 'b') => receiver.received.filter((d) => d.project === project);
      // Each report once, in one attempt.
      for (const [reports, project] of [
        [aReports, 'a'],
        [bReports, 'b'],
      ] as const) {
        expect(
          received(project)
            .map((d) => d.reportId)
            .sort(),
        ).toEqual(reports.map((r) => r.id).sort());
        expect(reports.every((r) => r.delivery_attempts === 1)).toBe(true);
      }
      expect(aReports.length).toBeGreaterThanOrEqual(A_SCHEDULES);

      // B's report went out while A's were being worked through: at most one of A's was answered
      // before it arrived (without turns, B's delivery queues behind A's, which take all 4 slots:
      // measured, 3 of A's were answered first), and A's last arrived after it.
      const bArrived = received('b')[0]!.arrivedAt;
      expect(received('a').filter((d) => d.answeredAt! <= bArrived).length).toBeLessThanOrEqual(1);
      expect(Math.max(...received('a').map((d) => d.arrivedAt))).toBeGreaterThan(bArrived);
      // One of A's deliveries at a time per worker process (one process, unless other test files run beside this one).
      expect(receiver.maxInFlight.a).toBeLessThanOrEqual(Math.max(1, await queue.getWorkersCount()));

      // Deferred jobs were put back for later, not failed, and used no attempt: one attempt each (BullMQ counts the one that completed).
      const deferrals = (await services.metrics.getSingleMetric('spanforge_cost_report_jobs_deferred_total')?.get())?.values ?? [];
      expect(deferrals.reduce((n, v) => n + v.value, 0)).toBeGreaterThan(0);
      const jobs = await Promise.all([
        ...aSchedules.map((id) => queue.getJob(`fairness-${id}`)),
        ...aReports.map((r) => queue.getJob(deliveryJobId(r.id))),
      ]);
      expect(jobs.map((j) => [j?.finishedOn !== undefined && !j.failedReason, j?.attemptsMade])).toEqual(jobs.map(() => [true, 1]));
    } finally {
      producer.add = add;
    }
  }, 120_000);
});
