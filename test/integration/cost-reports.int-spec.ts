import { execFile, spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { parse } from 'csv-parse/sync';
import { COST_REPORTS_QUEUE, schedulerId } from '@spanforge/queue';
import { verifyWebhookSignature, type CostReport } from '@spanforge/reports';
import { SpanRecorder, exportSpans, exportSucceeded, graphql, otlpExporter } from '../support';
import { expectedTrace, recordAgentTrace } from './agent-trace';
import { startIngestHarness, type IngestHarness } from './ingest-harness';
import { startWebhookReceiver } from './webhook-receiver';

const run = promisify(execFile);
const CHROMIUM = spawnSync('sh', ['-c', 'command -v chromium']).stdout.toString().trim();
const CALL = { model: 'gpt-4o-mini', provider: 'openai', input: 900, cacheRead: 100, output: 80 };
const SONNET = { model: 'claude-3-5-sonnet-20241022', provider: 'anthropic', input: 2_000, cacheRead: 0, output: 300 };

async function waitFor(condition: () => boolean | Promise<boolean>, what: string, timeoutMs = 30_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await condition())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

/** Scheduled cost reports delivered to a real receiver, checked against the spans and scores sent. */
describe('scheduled cost reports', () => {
  let h: IngestHarness;
  let api: string;
  let project: Awaited<ReturnType<IngestHarness['newProject']>>;
  let receiver: Awaited<ReturnType<typeof startWebhookReceiver>>;
  const sent: Array<ReturnType<typeof expectedTrace> & { start: number }> = [];
  const dir = mkdtempSync(path.join(os.tmpdir(), 'reports-'));
  const q = <T>(query: string, variables: Record<string, unknown> = {}, key = project.apiKey) => graphql<T>(api, query, variables, key);

  beforeAll(async () => {
    h = await startIngestHarness({ ALLOW_PRIVATE_WEBHOOKS: 'true' });
    api = h.api;
    project = await h.newProject('report-tenant');
    receiver = await startWebhookReceiver();
    // Recent traces (the last hour), so "the window ending now" holds them.
    const now = Date.now();
    const plan = [
      { session: 'r1', calls: [CALL], start: now - 50 * 60_000 },
      { session: 'r1', calls: [CALL, SONNET], start: now - 40 * 60_000 },
      { session: 'r2', calls: [SONNET], start: now - 30 * 60_000 },
    ];
    let spanCount = 0;
    for (const entry of plan) {
      const recorder = new SpanRecorder('report-agent');
      recordAgentTrace(recorder, { session: entry.session, calls: entry.calls, start: entry.start });
      const spans = recorder.finished();
      spanCount += spans.length;
      sent.push({ ...expectedTrace(spans), start: entry.start });
      expect(exportSucceeded(await exportSpans(otlpExporter('http/protobuf', { http: h.http, grpc: h.grpc }, project.apiKey), spans))).toBe(
        true,
      );
    }
    await h.waitForSpans(project.projectId, spanCount);
    for (const [i, value] of [4, 2].entries()) {
      await fetch(`${api}/v1/feedback`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', authorization: `Bearer ${project.apiKey}` },
        body: JSON.stringify({ traceId: sent[i]!.traceId, name: 'helpful', value }),
      });
    }
  });
  afterAll(async () => {
    await h.stop();
    await receiver.close();
    rmSync(dir, { recursive: true, force: true });
  });

  const CREATE = `mutation($i: CostReportScheduleInput!) { createCostReportSchedule(input: $i) { schedule { id cron timezone window groupBy } signingSecret } }`;

  it('refuses a bad cron, timezone, window or webhook with a clear message', async () => {
    const base = { cron: '0 9 * * *', timezone: 'Europe/Lisbon', window: 'P1D', groupBy: ['MODEL'], webhookUrl: receiver.url };
    for (const bad of [{ cron: 'every day' }, { timezone: 'Mars/Olympus' }, { window: 'P1M' }, { webhookUrl: 'ftp://example.com/x' }]) {
      const result = await q(CREATE, { i: { ...base, ...bad } });
      expect(result.errors![0]!.extensions!.code).toBe('BAD_USER_INPUT');
    }
    // Every problem in one answer, so a schedule is fixed in one round trip.
    const allBad = await q(CREATE, {
      i: { cron: 'every day', timezone: 'Mars/Olympus', window: '7 days', groupBy: ['MODEL'], webhookUrl: 'ftp://example.com/x' },
    });
    const message = allBad.errors![0]!.message;
    for (const named of ['every day', 'Mars/Olympus', '7 days', 'http or https']) expect(message).toContain(named);
  });

  it('runs a report now, signed, with the numbers of the spans and scores sent; CSV and HTML too', async () => {
    const created = await q<{ createCostReportSchedule: { schedule: { id: string }; signingSecret: string } }>(CREATE, {
      i: {
        cron: '0 9 * * *',
        timezone: 'Europe/Lisbon',
        window: 'PT2H',
        groupBy: ['MODEL'],
        webhookUrl: receiver.url,
        includeFeedback: true,
      },
    });
    expect(created.errors).toBeUndefined();
    const { schedule, signingSecret } = created.data!.createCostReportSchedule;
    // The schedule is a BullMQ job scheduler firing at 09:00 Lisbon time.
    const scheduler = await h.services.queues.queue(COST_REPORTS_QUEUE).getJobScheduler(schedulerId(schedule.id));
    expect(scheduler).toMatchObject({ pattern: '0 9 * * *', tz: 'Europe/Lisbon' });
    const next = new Date(Number(scheduler!.next));
    expect(new Intl.DateTimeFormat('en-GB', { timeZone: 'Europe/Lisbon', hour: '2-digit', minute: '2-digit' }).format(next)).toBe('09:00');
    const ran = await q<{ runCostReportNow: { id: string; csvPath: string; htmlPath: string } }>(
      'mutation($s: ID!) { runCostReportNow(scheduleId: $s) { id csvPath htmlPath deliveryStatus } }',
      { s: schedule.id },
    );
    expect(ran.errors).toBeUndefined();
    const reportId = ran.data!.runCostReportNow.id;
    await waitFor(() => receiver.deliveries.some((d) => d.headers['spanforge-report-id'] === reportId), 'the delivery');
    const delivery = receiver.deliveries.find((d) => d.headers['spanforge-report-id'] === reportId)!;
    expect(
      verifyWebhookSignature(
        delivery.body,
        String(delivery.headers['spanforge-signature']),
        signingSecret,
        300,
        Math.floor(Date.now() / 1000),
      ),
    ).toBe(true);
    expect(
      verifyWebhookSignature(
        delivery.body,
        String(delivery.headers['spanforge-signature']),
        'whsec_wrong',
        300,
        Math.floor(Date.now() / 1000),
      ),
    ).toBe(false);
    const report = JSON.parse(delivery.body) as CostReport;
    // The body names the report the header, costReport and the CSV path name.
    expect(report.id).toBe(reportId);
    expect(report.totals.traceCount).toBe(sent.length);
    expect(report.totals.costUsd).toBeCloseTo(
      sent.reduce((n, t) => n + t.costUsd, 0),
      9,
    );
    expect(report.totals.inputTokens).toBe(sent.reduce((n, t) => n + t.inputTokens, 0));
    expect(report.previousTotals.traceCount).toBe(0);
    expect(report.change.costUsd).toBeNull();
    expect(
      report.breakdown
        .filter((r) => r.keys[0] !== '')
        .map((r) => r.keys[0])
        .sort(),
    ).toEqual([CALL.model, SONNET.model].sort());
    const r1 = report.topSessions.find((s) => s.sessionId === 'r1')!;
    expect(r1.costUsd).toBeCloseTo(sent[0]!.costUsd + sent[1]!.costUsd, 9);
    expect(r1.feedback).toEqual([{ name: 'helpful', count: 2, avg: 3 }]);
    expect(report.topTraces[0]!.costUsd).toBeCloseTo(Math.max(...sent.map((t) => t.costUsd)), 9);

    const status = await q<{ costReport: { deliveryStatus: string; deliveryAttempts: number } }>(
      'query($id: ID!) { costReport(id: $id) { deliveryStatus deliveryAttempts } }',
      { id: reportId },
    );
    expect(status.data!.costReport).toEqual({ deliveryStatus: 'delivered', deliveryAttempts: 1 });

    const csvResponse = await fetch(`${api}${ran.data!.runCostReportNow.csvPath}`, {
      headers: { authorization: `Bearer ${project.apiKey}` },
    });
    expect(csvResponse.headers.get('content-type')).toContain('text/csv');
    const rows = parse(await csvResponse.text(), { relax_column_count: true }) as string[][];
    expect(rows.some((row) => row.includes(CALL.model))).toBe(true);
    expect(rows.some((row) => row.includes('r1'))).toBe(true);
    const html = await (
      await fetch(`${api}${ran.data!.runCostReportNow.htmlPath}`, { headers: { authorization: `Bearer ${project.apiKey}` } })
    ).text();
    expect(html).toContain('<svg');
    expect((await fetch(`${api}${ran.data!.runCostReportNow.htmlPath}`)).status).toBe(401);
    // Another project's key finds neither form of the report, nor the report itself.
    const stranger = await h.newProject('report-stranger');
    for (const file of [ran.data!.runCostReportNow.htmlPath, ran.data!.runCostReportNow.csvPath]) {
      expect((await fetch(`${api}${file}`, { headers: { authorization: `Bearer ${stranger.apiKey}` } })).status).toBe(404);
    }
    const theirs = await q<{ costReport: unknown }>(
      'query($id: ID!) { costReport(id: $id) { deliveryStatus } }',
      { id: reportId },
      stranger.apiKey,
    );
    expect(theirs.data?.costReport ?? null).toBeNull();
    if (CHROMIUM) {
      const file = path.join(dir, 'report.html');
      writeFileSync(file, html);
      const { stdout } = await run(
        CHROMIUM,
        [
          '--headless',
          '--no-sandbox',
          '--disable-gpu',
          '--disable-background-networking',
          '--disable-component-update',
          '--disable-sync',
          '--no-first-run',
          `--user-data-dir=${path.join(dir, 'p')}`,
          '--dump-dom',
          `file://${file}`,
        ],
        { timeout: 60_000 },
      );
      expect(stdout).toContain('r1');
      expect(stdout).toContain(CALL.model);
    }
  });

  it('fires on its own at the local time its cron names, in a UTC+5:30 timezone', async () => {
    // The next whole minute at least 15 s away, written as Kolkata wall-clock time in the cron.
    const fireAt = new Date(Math.ceil((Date.now() + 15_000) / 60_000) * 60_000);
    const [hour, minute] = new Intl.DateTimeFormat('en-GB', {
      timeZone: 'Asia/Kolkata',
      hour: '2-digit',
      minute: '2-digit',
      hourCycle: 'h23',
    })
      .format(fireAt)
      .split(':')
      .map(Number);
    const created = await q<{ createCostReportSchedule: { schedule: { id: string } } }>(CREATE, {
      i: { cron: `${minute} ${hour} * * *`, timezone: 'Asia/Kolkata', window: 'PT1H', groupBy: ['MODEL'], webhookUrl: receiver.url },
    });
    expect(created.errors).toBeUndefined();
    const id = created.data!.createCostReportSchedule.schedule.id;
    await waitFor(
      () => receiver.deliveries.some((d) => (JSON.parse(d.body) as CostReport).scheduleId === id),
      'the scheduled firing',
      120_000,
    );
    const report = receiver.deliveries.map((d) => JSON.parse(d.body) as CostReport).find((r) => r.scheduleId === id)!;
    expect(report.windowEnd).toBe(fireAt.toISOString());
    expect(new Date(report.windowStart).getTime()).toBe(fireAt.getTime() - 3_600_000);
  }, 150_000);

  it("produces each missed window once, at the schedule's local times, and retries a failing webhook", async () => {
    const created = await q<{ createCostReportSchedule: { schedule: { id: string } } }>(CREATE, {
      i: { cron: '0 9 * * *', timezone: 'America/New_York', window: 'P1D', groupBy: ['DAY'], webhookUrl: receiver.url },
    });
    const id = created.data!.createCostReportSchedule.schedule.id;
    // The worker was "down" for three days: the next firing produces the three windows, at 09:00 New York time.
    const later = new Date(Date.now() + 3 * 86_400_000 + 60_000);
    receiver.failNext(2);
    expect(await h.services.costReports.fire(id, later)).toBe(3);
    expect(await h.services.costReports.fire(id, later)).toBe(0);
    const reports = await q<{ costReports: Array<{ scheduleId: string; windowEnd: string; windowStart: string }> }>(
      '{ costReports(first: 50) { scheduleId windowStart windowEnd } }',
    );
    const mine = reports.data!.costReports.filter((r) => r.scheduleId === id);
    expect(mine).toHaveLength(3);
    for (const report of mine) {
      const local = new Intl.DateTimeFormat('en-US', {
        timeZone: 'America/New_York',
        hour: '2-digit',
        minute: '2-digit',
        hour12: false,
      }).format(new Date(report.windowEnd));
      expect(local).toBe('09:00');
      expect(new Date(report.windowEnd).getTime() - new Date(report.windowStart).getTime()).toBe(86_400_000);
    }
    // Two failures first, then each report arrives exactly once.
    await waitFor(
      () =>
        mine.every(
          (r) => receiver.deliveries.filter((d) => JSON.parse(d.body).windowEnd === new Date(r.windowEnd).toISOString()).length === 1,
        ),
      'three deliveries',
      60_000,
    );
  });

  it('loses no delivery when the worker stops between storing a report and queueing its delivery', async () => {
    const created = await q<{ createCostReportSchedule: { schedule: { id: string } } }>(CREATE, {
      i: { cron: '30 * * * *', timezone: 'Asia/Kolkata', window: 'PT1H', groupBy: ['MODEL'], webhookUrl: receiver.url },
    });
    const id = created.data!.createCostReportSchedule.schedule.id;
    const later = new Date(Date.now() + 2 * 3_600_000);
    // Fault at the seam: queueing the delivery fails, as if the worker died right after the insert.
    const queue = (h.services.costReports as unknown as { deps: { queue: { add: (...a: unknown[]) => Promise<unknown> } } }).deps.queue;
    const add = queue.add.bind(queue);
    queue.add = async () => {
      throw new Error('worker killed');
    };
    await expect(h.services.costReports.fire(id, later)).rejects.toThrow('worker killed');
    queue.add = add;
    const before = receiver.deliveries.length;
    // The catch-up firing at restart: no new report for the stored window, and the pending delivery goes out.
    await h.services.costReports.fire(id, later);
    const reports = await q<{ costReports: Array<{ id: string; scheduleId: string }> }>('{ costReports(first: 100) { id scheduleId } }');
    const mine = reports.data!.costReports.filter((r) => r.scheduleId === id);
    expect(mine.length).toBeGreaterThan(0);
    await waitFor(
      () => mine.every((r) => receiver.deliveries.filter((d) => d.headers['spanforge-report-id'] === r.id).length === 1),
      'the pending deliveries',
    );
    expect(receiver.deliveries.length - before).toBe(mine.length);
  });
});
