import { ProjectLimiter } from './project-limiter';

describe('ProjectLimiter', () => {
  let now = 0;
  const limiter = (requestsPerSecond: number, concurrentRequests: number) =>
    new ProjectLimiter({ requestsPerSecond, concurrentRequests }, () => now);

  beforeEach(() => {
    now = 0;
  });

  it('refuses a project past its requests in progress until one ends, and not another project', () => {
    const l = limiter(1_000, 2);
    const first = l.admit('A');
    const second = l.admit('A');
    expect([first.admitted, second.admitted]).toEqual([true, true]);
    expect(l.admit('A')).toEqual({ admitted: false, retryAfterSeconds: 1, reason: 'concurrency' });
    expect(l.admit('B').admitted).toBe(true);
    if (first.admitted) {
      first.release();
      first.release(); // once only
    }
    expect(l.admit('A').admitted).toBe(true);
    expect(l.admit('A').admitted).toBe(false);
  });

  it('refuses a project past its rate (after a two-second burst) and says when to come back', () => {
    const l = limiter(5, 1_000);
    for (let i = 0; i < 10; i++) expect(l.admit('A').admitted).toBe(true);
    expect(l.admit('A')).toEqual({ admitted: false, retryAfterSeconds: 1, reason: 'rate' });
    expect(l.admit('B').admitted).toBe(true);
    now += 1_000;
    for (let i = 0; i < 5; i++) expect(l.admit('A').admitted).toBe(true);
    expect(l.admit('A').admitted).toBe(false);
  });
});
