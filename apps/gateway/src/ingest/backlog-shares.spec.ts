import { BacklogShares, OVERFLOW, PRESSURE } from './backlog-shares';

describe('BacklogShares', () => {
  let now = 0;
  const shares = () => new BacklogShares(() => now);
  const CAP = 1_000;

  beforeEach(() => {
    now = 0;
  });

  it('admits everyone while the queue is shallow', () => {
    const s = shares();
    for (let i = 0; i < 1_000; i++) s.record('flood');
    expect(s.verdict('flood', CAP * PRESSURE - 1, CAP)).toEqual({ admit: true });
  });

  it('under pressure refuses the project that fills the queue and admits the others', () => {
    const s = shares();
    for (let i = 0; i < 950; i++) s.record('flood');
    for (let i = 0; i < 50; i++) s.record('steady');
    expect(s.verdict('flood', CAP * PRESSURE, CAP)).toEqual({ admit: false, reason: 'over_share' });
    expect(s.verdict('steady', CAP * PRESSURE, CAP)).toEqual({ admit: true });
    // At the cap the others still get in; past the overflow nobody does.
    expect(s.verdict('steady', CAP, CAP)).toEqual({ admit: true });
    expect(s.verdict('newcomer', CAP, CAP)).toEqual({ admit: true });
    expect(s.verdict('steady', CAP * OVERFLOW, CAP)).toEqual({ admit: false, reason: 'queue_full' });
  });

  it('admits projects sending equal shares, even when the queue is deep', () => {
    const s = shares();
    for (let i = 0; i < 100; i++) for (const p of ['a', 'b', 'c']) s.record(p);
    for (const p of ['a', 'b', 'c']) expect(s.verdict(p, CAP * 0.9, CAP)).toEqual({ admit: true });
  });

  it('forgets a flood a few seconds after it stops', () => {
    const s = shares();
    for (let i = 0; i < 500; i++) s.record('flood');
    s.record('steady');
    expect(s.verdict('flood', CAP * 0.9, CAP).admit).toBe(false);
    now += 30_000;
    s.record('steady');
    s.record('flood');
    expect(s.verdict('flood', CAP * 0.9, CAP)).toEqual({ admit: true });
  });

  it('lets a lone project fill the queue up to its cap', () => {
    const s = shares();
    for (let i = 0; i < 500; i++) s.record('only');
    expect(s.verdict('only', CAP - 1, CAP)).toEqual({ admit: true });
    expect(s.verdict('only', CAP, CAP)).toEqual({ admit: false, reason: 'over_share' });
  });
});
