import { ProjectSlots } from './cost-report.slots';

function clock(start = 1_000_000) {
  let now = start;
  return { now: () => now, advance: (ms: number) => void (now += ms) };
}

describe('project slots for report jobs', () => {
  it('gives a project its share and no more, while other projects keep theirs', () => {
    const slots = new ProjectSlots<string>(1, 15_000);
    expect(slots.take('A', 'a1')).toBe(true);
    expect(slots.take('A', 'a2')).toBe(false);
    expect(slots.take('B', 'b1')).toBe(true);
    expect(slots.hasFree('A')).toBe(false);
    slots.release('A');
    expect(slots.hasFree('A')).toBe(true);
    expect(slots.take('A', 'a2')).toBe(true);
  });

  it('takes a share of more than one slot when configured so', () => {
    const slots = new ProjectSlots<string>(2, 15_000);
    expect(['a1', 'a2', 'a3'].map((id) => slots.take('A', id))).toEqual([true, true, false]);
  });

  it('refuses a share that is not a whole number of at least one', () => {
    for (const bad of [0, -1, 1.5, Number.NaN]) expect(() => new ProjectSlots(bad, 1)).toThrow(/whole number ≥ 1/);
  });

  it('wakes the longest-deferred job when a slot frees, each one once', () => {
    const t = clock();
    const slots = new ProjectSlots<string>(1, 15_000, t.now);
    slots.take('A', 'a1');
    for (const id of ['a2', 'a3', 'a4']) {
      expect(slots.defer('A', id, id, t.now() + 15_000)).toBe('project_busy');
      t.advance(10);
    }
    slots.release('A');
    expect(slots.nextToWake('A')).toBe('a2');
    // Waking a2 failed (it left the delayed set): the next one is a3, and a2 is not offered again.
    expect(slots.nextToWake('A')).toBe('a3');
    expect(slots.nextToWake('B')).toBeUndefined();
  });

  it('keeps the place of a woken job that found its project busy again, ahead of newer ones', () => {
    const t = clock();
    const slots = new ProjectSlots<string>(1, 15_000, t.now);
    slots.take('A', 'a1');
    slots.defer('A', 'a2', 'a2', t.now() + 15_000);
    t.advance(10);
    slots.defer('A', 'a3', 'a3', t.now() + 15_000);
    slots.release('A');
    expect(slots.nextToWake('A')).toBe('a2');
    // A fresh job of A reached a worker first and took the slot; a2 comes back and is deferred again.
    expect(slots.take('A', 'a9')).toBe(true);
    t.advance(10);
    expect(slots.defer('A', 'a2', 'a2', t.now() + 15_000)).toBe('still_busy');
    slots.release('A');
    expect(slots.nextToWake('A')).toBe('a2');
    expect(slots.take('A', 'a2')).toBe(true);
    expect(slots.deferredCount()).toBe(1);
  });

  it('does not wake a job whose delay has lapsed (the queue has handed it out again by itself)', () => {
    const t = clock();
    const slots = new ProjectSlots<string>(1, 15_000, t.now);
    slots.take('A', 'a1');
    slots.defer('A', 'a2', 'a2', t.now() + 15_000);
    t.advance(5_000);
    slots.defer('A', 'a3', 'a3', t.now() + 15_000);
    t.advance(10_000);
    slots.release('A');
    expect(slots.nextToWake('A')).toBe('a3');
  });

  it('forgets deferred jobs that went elsewhere, one grace period after their delay lapsed', () => {
    const t = clock();
    const slots = new ProjectSlots<string>(1, 15_000, t.now);
    slots.take('A', 'a1');
    slots.defer('A', 'a2', 'a2', t.now() + 15_000);
    slots.take('B', 'b1');
    slots.defer('B', 'b2', 'b2', t.now() + 15_000);
    t.advance(30_001);
    slots.defer('A', 'a3', 'a3', t.now() + 15_000);
    expect(slots.deferredCount()).toBe(1);
  });
});
