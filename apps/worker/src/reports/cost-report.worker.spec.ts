import { DelayedError, ErrorCode, UnrecoverableError, type Job } from 'bullmq';
import { Registry } from 'prom-client';
import { WebhookDeliveryError, type CostReportService } from '@spanforge/cost-reports';
import type { CostReportJob, QueueBackend } from '@spanforge/queue';
import { costReportProcessor, startCostReportWorker } from './cost-report.worker';
import { ReportTurns } from './cost-report.turns';

interface FakeJob {
  id: string;
  name: string;
  data: CostReportJob;
  attemptsMade: number;
  opts: { attempts: number };
  moves: number[];
  promoted: number;
  moveToDelayed(at: number, token?: string): Promise<void>;
  promote(): Promise<void>;
}

function job(name: string, data: CostReportJob, attemptsMade = 0, attempts = 5, id = `${name}-1`): FakeJob {
  return {
    id,
    name,
    data,
    attemptsMade,
    opts: { attempts },
    moves: [],
    promoted: 0,
    async moveToDelayed(at, token) {
      if (token !== 'token') throw new Error('moved without the lock token');
      this.moves.push(at);
    },
    async promote() {
      this.promoted++;
    },
  };
}
const asJob = (j: FakeJob) => j as unknown as Job<CostReportJob>;

type Service = {
  fire?: (id: string) => Promise<number>;
  deliver?: (id: string, final: boolean) => Promise<void>;
  projectOf?: (name: string, job: CostReportJob) => Promise<string | undefined>;
};

function setup(service: Service = {}, withTurns = false) {
  const warnings: string[] = [];
  const debug: string[] = [];
  const log = { debug: (m: string) => debug.push(m), warn: (m: string) => warnings.push(m), error: (m: string) => warnings.push(m) };
  const calls: string[] = [];
  const metrics = new Registry();
  const turns = withTurns ? new ReportTurns({ log, metrics, deferMs: 15_000 }) : undefined;
  const process = costReportProcessor(
    {
      fire: service.fire ?? (async (id) => (calls.push(`fire ${id}`), 2)),
      deliver: service.deliver ?? (async (id, final) => void calls.push(`deliver ${id} ${final}`)),
      projectOf: service.projectOf ?? (async (_name, data) => data.projectId),
    },
    log,
    turns,
  );
  const deferrals = async () =>
    Object.fromEntries(
      ((await metrics.getSingleMetric('spanforge_cost_report_jobs_deferred_total')?.get())?.values ?? []).map((v) => [
        `${v.labels.job} ${v.labels.reason}`,
        v.value,
      ]),
    );
  return { process, warnings, debug, calls, turns, deferrals };
}

/** A job body that runs until released. */
function gate() {
  let open!: () => void;
  const opened = new Promise<void>((resolve) => (open = resolve));
  return { open, opened };
}

describe('cost-report job processor', () => {
  it('fires schedules and delivers reports, the last attempt marked final', async () => {
    const { process, calls } = setup();
    await expect(process(asJob(job('fire', { scheduleId: 's1' })))).resolves.toBe(2);
    await process(asJob(job('deliver', { reportId: 'r1' }, 0, 10)));
    await process(asJob(job('deliver', { reportId: 'r1' }, 9, 10)));
    expect(calls).toEqual(['fire s1', 'deliver r1 false', 'deliver r1 true']);
  });

  it('fails a job with a name it does not know, for good, naming it', async () => {
    const { process, warnings, calls } = setup({}, true);
    const error = await process(asJob(job('fire-everything', { scheduleId: 's1' })), 'token').catch((e: unknown) => e);
    expect(error).toBeInstanceOf(UnrecoverableError);
    expect((error as Error).message).toBe('unknown cost-report job name "fire-everything"');
    expect(calls).toEqual([]);
    expect(warnings).toEqual([
      'cost-report job fire-everything-1 (fire-everything) failed on attempt 1 of 5, for good: unknown cost-report job name "fire-everything"',
    ]);
  });

  it('logs a failed attempt with its reason and rethrows it for the retry', async () => {
    const { process, warnings } = setup({ fire: async () => Promise.reject(new Error('ClickHouse unreachable')) });
    await expect(process(asJob(job('fire', { scheduleId: 's1' }, 1)))).rejects.toThrow('ClickHouse unreachable');
    expect(warnings).toEqual(['cost-report job fire-1 (fire) failed on attempt 2 of 5, will retry: ClickHouse unreachable']);
  });

  it('does not log a refused delivery twice (the service has said it with the report and schedule)', async () => {
    const { process, warnings } = setup({ deliver: async () => Promise.reject(new WebhookDeliveryError('webhook answered 500')) });
    await expect(process(asJob(job('deliver', { reportId: 'r1' })))).rejects.toThrow('webhook answered 500');
    expect(warnings).toEqual([]);
  });
});

describe('cost-report jobs in turns between projects', () => {
  it("defers a project's second job while its first runs, without using an attempt or failing it, and runs other projects' jobs", async () => {
    const slow = gate();
    const { process, calls, warnings, debug, turns, deferrals } = setup(
      { deliver: async (id) => (id === 'a1' ? slow.opened : Promise.resolve()).then(() => void calls.push(`deliver ${id}`)) },
      true,
    );
    const a1 = job('deliver', { reportId: 'a1', projectId: 'A' }, 0, 10, 'deliver-a1');
    const a2 = job('deliver', { reportId: 'a2', projectId: 'A' }, 3, 10, 'deliver-a2');
    const running = process(asJob(a1), 'token');
    const before = Date.now();
    await expect(process(asJob(a2), 'token')).rejects.toBeInstanceOf(DelayedError);
    expect(a2.moves).toHaveLength(1);
    expect(a2.moves[0]!).toBeGreaterThanOrEqual(before + 15_000);
    expect(a2.attemptsMade).toBe(3);
    await process(asJob(job('deliver', { reportId: 'b1', projectId: 'B' }, 0, 10, 'deliver-b1')), 'token');
    expect(calls).toEqual(['deliver b1']);
    expect(a2.promoted).toBe(0);
    slow.open();
    await running;
    await new Promise((r) => setImmediate(r));
    // a1's slot is free: a2 comes back now rather than when its delay lapses.
    expect(a2.promoted).toBe(1);
    await process(asJob(a2), 'token');
    expect(calls).toEqual(['deliver b1', 'deliver a1', 'deliver a2']);
    expect(warnings).toEqual([]);
    expect(await deferrals()).toEqual({ 'deliver project_busy': 1 });
    expect(debug[0]).toMatch(/^cost-report job deliver-a2 \(deliver\) of project A deferred \(project_busy\)/);
    expect(turns!.slots.deferredCount()).toBe(0);
  });

  it('finds the project of a job queued without one, and frees the slot of a failed job', async () => {
    const looked: string[] = [];
    const { process, deferrals } = setup(
      {
        fire: async () => Promise.reject(new Error('ClickHouse unreachable')),
        projectOf: async (name, data) => (looked.push(name), data.projectId ?? 'A'),
      },
      true,
    );
    const old = job('fire', { scheduleId: 's1' }, 0, 5, 'fire-old');
    await expect(process(asJob(old), 'token')).rejects.toThrow('ClickHouse unreachable');
    await expect(process(asJob(job('fire', { scheduleId: 's2' }, 0, 5, 'fire-old-2')), 'token')).rejects.toThrow('ClickHouse unreachable');
    expect(looked).toEqual(['fire', 'fire']);
    expect(await deferrals()).toEqual({});
  });

  it('runs a job whose schedule or report is gone outside the turns (it has nothing to do)', async () => {
    const slow = gate();
    const { process, calls } = setup(
      {
        fire: async (id) => (id === 's1' ? slow.opened : Promise.resolve()).then(() => (calls.push(`fire ${id}`), 0)),
        projectOf: async () => undefined,
      },
      true,
    );
    const first = process(asJob(job('fire', { scheduleId: 's1' }, 0, 5, 'f1')), 'token');
    await process(asJob(job('fire', { scheduleId: 's2' }, 0, 5, 'f2')), 'token');
    slow.open();
    await first;
    expect(calls).toEqual(['fire s2', 'fire s1']);
  });
});

describe('the cost-report worker at start', () => {
  /** A queue backend that records the jobs added; `register` as the test gives it. */
  function started(register: () => Promise<void>) {
    const added: string[] = [];
    const warnings: string[] = [];
    const schedule = { id: 'sched-1', project_id: 'P1' };
    const service = { activeSchedules: async () => [schedule], register } as unknown as CostReportService;
    const queues = {
      worker: () => undefined,
      queue: () => ({ add: async (_name: string, _data: unknown, opts: { jobId: string }) => void added.push(opts.jobId) }),
    } as unknown as QueueBackend;
    const log = { debug: () => undefined, warn: (m: string) => warnings.push(m), error: (m: string) => warnings.push(m) };
    return { run: () => startCostReportWorker(service, queues, log, new Registry()), added, warnings };
  }

  it("goes on when another worker starting at the same moment registered a schedule first (BullMQ's scheduler id collision)", async () => {
    const { run, added, warnings } = started(async () => {
      throw Object.assign(new Error('Cannot create job scheduler iteration - job ID already exists. addJobScheduler'), {
        code: ErrorCode.SchedulerJobIdCollision,
      });
    });
    await run();
    expect(warnings).toEqual([expect.stringContaining('cost report schedule sched-1: another process registered it at the same moment')]);
    // Its catch-up firing is still queued.
    expect(added).toEqual([expect.stringMatching(/^catch-up-sched-1-\d+$/)]);
  });

  it('fails on any other error of the registration', async () => {
    const { run, added } = started(async () => {
      throw new Error('connection refused');
    });
    await expect(run()).rejects.toThrow('connection refused');
    expect(added).toEqual([]);
  });
});
