import { ThrottledWarning, reasonOf } from './error-log';

describe('ThrottledWarning', () => {
  beforeEach(() => jest.useFakeTimers({ now: 1_000_000 }));
  afterEach(() => jest.useRealTimers());

  it('says the first warning at once, then at most one line per interval with the count of the others', () => {
    const lines: string[] = [];
    const warning = new ThrottledWarning({ warn: (m) => lines.push(m) }, 10_000);
    warning.warn('redis: connect ECONNREFUSED (1)');
    for (let i = 2; i <= 500; i++) {
      jest.advanceTimersByTime(10);
      warning.warn(`redis: connect ECONNREFUSED (${i})`);
    }
    expect(lines).toEqual(['redis: connect ECONNREFUSED (1)']);
    jest.advanceTimersByTime(10_000 - 4_990);
    expect(lines).toEqual([
      'redis: connect ECONNREFUSED (1)',
      'redis: connect ECONNREFUSED (500) [499 such warnings in the last 10 s; only the latest shown]',
    ]);
    // Quiet from here on: nothing more is said, and the next warning after an interval is said at once.
    jest.advanceTimersByTime(60_000);
    expect(lines).toHaveLength(2);
    warning.warn('redis: back to failing');
    expect(lines).toHaveLength(3);
    expect(lines[2]).toBe('redis: back to failing');
  });

  it('says what it held back when flushed (a close)', () => {
    const lines: string[] = [];
    const warning = new ThrottledWarning({ warn: (m) => lines.push(m) }, 10_000);
    warning.warn('a');
    jest.advanceTimersByTime(2_000);
    warning.warn('b');
    warning.flush();
    expect(lines).toEqual(['a', 'b [1 such warning in the last 2 s; only the latest shown]']);
    warning.flush();
    jest.advanceTimersByTime(20_000);
    expect(lines).toHaveLength(2);
  });
});

describe('reasonOf', () => {
  it('finds the reason where Node puts it', () => {
    expect(reasonOf(new Error('connection terminated'))).toBe('connection terminated');
    expect(reasonOf(Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:6379'), { code: 'ECONNREFUSED' }))).toBe(
      'connect ECONNREFUSED 127.0.0.1:6379',
    );
    expect(reasonOf(Object.assign(new Error('password authentication failed'), { code: '28P01' }))).toBe(
      'password authentication failed (28P01)',
    );
    const both = Object.assign(
      new AggregateError(
        [
          Object.assign(new Error('connect ECONNREFUSED ::1:6379'), { code: 'ECONNREFUSED' }),
          new Error('connect ECONNREFUSED 127.0.0.1:6379'),
        ],
        '',
      ),
      { code: 'ECONNREFUSED' },
    );
    expect(reasonOf(both)).toBe('connect ECONNREFUSED ::1:6379; connect ECONNREFUSED 127.0.0.1:6379');
    expect(reasonOf('plain')).toBe('plain');
  });
});
