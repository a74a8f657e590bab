import { ranBefore } from './ingest.processor';

describe('ranBefore', () => {
  const first = { attemptsMade: 0, attemptsStarted: 1, stalledCounter: 0 };

  it('tells a first run from a job that ran before, however it came back', () => {
    expect(ranBefore(first)).toBe(false);
    // Failed and retried (the round stopped on an error).
    expect(ranBefore({ ...first, attemptsMade: 1, attemptsStarted: 2 })).toBe(true);
    // Taken over after the worker holding it died: started again, no attempt counted.
    expect(ranBefore({ ...first, attemptsStarted: 2 })).toBe(true);
    // Returned to the queue by the stalled-job check, before it is taken again.
    expect(ranBefore({ ...first, stalledCounter: 1 })).toBe(true);
  });
});
