import type { CostReportDeps } from './cost-report.service';
import { CostReportService } from './cost-report.service';
import type { CostReportRepository } from './schedule.repository';

/** The project of a report job, for the worker's turns between projects. */
describe('the project of a cost-report job', () => {
  const lookups: string[] = [];
  const repository = {
    projectOfSchedule: async (id: string) => (lookups.push(`schedule ${id}`), id === 's1' ? 'P1' : undefined),
    projectOfReport: async (id: string) => (lookups.push(`report ${id}`), id === 'r1' ? 'P2' : undefined),
  } as unknown as CostReportRepository;
  const service = new CostReportService({ repository } as unknown as CostReportDeps);
  beforeEach(() => lookups.splice(0));

  it('is the one the job names, without a lookup', async () => {
    expect(await service.projectOf('fire', { scheduleId: 's1', projectId: 'P9' })).toBe('P9');
    expect(await service.projectOf('deliver', { reportId: 'r1', projectId: 'P9' })).toBe('P9');
    expect(lookups).toEqual([]);
  });

  it("is looked up for a job queued before jobs named it: the schedule's or the report's", async () => {
    expect(await service.projectOf('fire', { scheduleId: 's1' })).toBe('P1');
    expect(await service.projectOf('deliver', { reportId: 'r1' })).toBe('P2');
    expect(await service.projectOf('deliver', { reportId: 'gone' })).toBeUndefined();
    expect(lookups).toEqual(['schedule s1', 'report r1', 'report gone']);
  });
});
