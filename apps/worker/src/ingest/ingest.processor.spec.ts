import { UpkeepFailedError } from '@spanforge/ingest';
import { upkeepMayHaveStopped } from './ingest.processor';

describe('upkeepMayHaveStopped', () => {
  const first = { attemptsMade: 0, attemptsStarted: 1, stalledCounter: 0, stacktrace: [] as string[] };
  const stackOf = (error: Error) => error.stack!;

  it('is false on a first run, and after attempts that failed before their upkeep (in the insert)', () => {
    expect(upkeepMayHaveStopped(first)).toBe(false);
    const insertFailed = stackOf(new Error('Timeout error.'));
    expect(upkeepMayHaveStopped({ ...first, attemptsMade: 2, attemptsStarted: 3, stacktrace: [insertFailed, insertFailed] })).toBe(false);
  });

  it('is true once any attempt failed in its upkeep, whatever failed after', () => {
    const upkeep = stackOf(new UpkeepFailedError(new Error('Code: 210. Connection refused')));
    const insert = stackOf(new Error('Timeout error.'));
    expect(upkeepMayHaveStopped({ ...first, attemptsMade: 1, attemptsStarted: 2, stacktrace: [upkeep] })).toBe(true);
    expect(upkeepMayHaveStopped({ ...first, attemptsMade: 2, attemptsStarted: 3, stacktrace: [upkeep, insert] })).toBe(true);
  });

  it('is true when a run ended with no failure recorded (its worker died or stalled)', () => {
    // Taken over after the worker holding it died: started again, no attempt counted.
    expect(upkeepMayHaveStopped({ ...first, attemptsStarted: 2 })).toBe(true);
    // Returned to the queue by the stalled-job check, before it is taken again.
    expect(upkeepMayHaveStopped({ ...first, stalledCounter: 1 })).toBe(true);
    // One failed attempt, then a run whose worker died.
    expect(
      upkeepMayHaveStopped({ ...first, attemptsMade: 1, attemptsStarted: 3, stacktrace: [stackOf(new Error('Timeout error.'))] }),
    ).toBe(true);
  });

  it('does not take an error whose cause mentions an upkeep for one', () => {
    const wrapped = stackOf(new Error('insert failed', { cause: new UpkeepFailedError('x') }));
    expect(upkeepMayHaveStopped({ ...first, attemptsMade: 1, attemptsStarted: 2, stacktrace: [wrapped] })).toBe(false);
  });
});
