import { IngestRateLimiter } from './rate-limiter';

describe('IngestRateLimiter', () => {
  let clock = 0;
  const limiter = () => new IngestRateLimiter(() => clock);
  const limits = { spansPerSecond: 100, bytesPerSecond: 10_000 };

  beforeEach(() => {
    clock = 0;
  });

  it('admits a burst of two seconds of rate, then asks to wait', () => {
    const l = limiter();
    expect(l.take('p', 150, 100, limits)).toBe(0);
    expect(l.take('p', 50, 100, limits)).toBe(0);
    // 0 spans left; 100 more need 1 s at 100/s.
    expect(l.take('p', 100, 100, limits)).toBe(1);
    clock += 1_000;
    expect(l.take('p', 100, 100, limits)).toBe(0);
  });

  it('takes neither cost when one bucket is short', () => {
    const l = limiter();
    expect(l.take('p', 1, 20_000, limits)).toBe(0);
    const wait = l.take('p', 1, 5_000, limits);
    // 5,000 bytes at 10,000/s → 0.5 s, rounded up to 1.
    expect(wait).toBe(1);
    clock += 500;
    expect(l.take('p', 199, 5_000, limits)).toBe(0);
  });

  it('keeps projects apart', () => {
    const l = limiter();
    expect(l.take('a', 200, 1, limits)).toBe(0);
    expect(l.take('a', 1, 1, limits)).toBeGreaterThan(0);
    expect(l.take('b', 200, 1, limits)).toBe(0);
  });

  it('admits a request larger than the burst when the bucket is full, and charges all of it', () => {
    const l = limiter();
    expect(l.take('p', 10_000, 1, limits)).toBe(0);
    // 9,800 spans of debt plus 1 → 98.01 s at 100/s.
    expect(l.take('p', 1, 1, limits)).toBe(99);
    clock += 98_000;
    expect(l.take('p', 1, 1, limits)).toBe(1);
    clock += 2_000;
    expect(l.take('p', 1, 1, limits)).toBe(0);
  });
});
