import { UnrecoverableError, type Job } from 'bullmq';
import { WebhookDeliveryError } from '@spanforge/cost-reports';
import type { DeliverJob, FireJob } from '@spanforge/queue';
import { costReportProcessor } from './cost-report.worker';

function job(name: string, data: FireJob | DeliverJob, attemptsMade = 0, attempts = 5): Job<FireJob | DeliverJob> {
  return { id: `${name}-1`, name, data, attemptsMade, opts: { attempts } } as unknown as Job<FireJob | DeliverJob>;
}

function setup(service: { fire?: (id: string) => Promise<number>; deliver?: (id: string, final: boolean) => Promise<void> } = {}) {
  const warnings: string[] = [];
  const log = { warn: (m: string) => warnings.push(m), error: (m: string) => warnings.push(m) };
  const calls: string[] = [];
  const process = costReportProcessor(
    {
      fire: service.fire ?? (async (id) => (calls.push(`fire ${id}`), 2)),
      deliver: service.deliver ?? (async (id, final) => void calls.push(`deliver ${id} ${final}`)),
    },
    log,
  );
  return { process, warnings, calls };
}

describe('cost-report job processor', () => {
  it('fires schedules and delivers reports, the last attempt marked final', async () => {
    const { process, calls } = setup();
    await expect(process(job('fire', { scheduleId: 's1' }))).resolves.toBe(2);
    await process(job('deliver', { reportId: 'r1' }, 0, 10));
    await process(job('deliver', { reportId: 'r1' }, 9, 10));
    expect(calls).toEqual(['fire s1', 'deliver r1 false', 'deliver r1 true']);
  });

  it('fails a job with a name it does not know, for good, naming it', async () => {
    const { process, warnings, calls } = setup();
    const error = await process(job('fire-everything', { scheduleId: 's1' })).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(UnrecoverableError);
    expect((error as Error).message).toBe('unknown cost-report job name "fire-everything"');
    expect(calls).toEqual([]);
    expect(warnings).toEqual([
      'cost-report job fire-everything-1 (fire-everything) failed on attempt 1 of 5, for good: unknown cost-report job name "fire-everything"',
    ]);
  });

  it('logs a failed attempt with its reason and rethrows it for the retry', async () => {
    const { process, warnings } = setup({ fire: async () => Promise.reject(new Error('ClickHouse unreachable')) });
    await expect(process(job('fire', { scheduleId: 's1' }, 1))).rejects.toThrow('ClickHouse unreachable');
    expect(warnings).toEqual(['cost-report job fire-1 (fire) failed on attempt 2 of 5, will retry: ClickHouse unreachable']);
  });

  it('does not log a refused delivery twice (the service has said it with the report and schedule)', async () => {
    const { process, warnings } = setup({ deliver: async () => Promise.reject(new WebhookDeliveryError('webhook answered 500')) });
    await expect(process(job('deliver', { reportId: 'r1' }))).rejects.toThrow('webhook answered 500');
    expect(warnings).toEqual([]);
  });
});
