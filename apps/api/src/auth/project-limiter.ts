import type { ApiLimits } from '@spanforge/config';

/** Burst allowance: a project's bucket holds this many seconds of its request rate. */
const BURST_SECONDS = 2;

export type Admission =
  { admitted: true; release: () => void } | { admitted: false; retryAfterSeconds: number; reason: 'rate' | 'concurrency' };

interface ProjectState {
  tokens: number;
  updatedAt: number;
  inFlight: number;
}

/**
 * Per project, on this api process: requests a second (token bucket) and requests in progress.
 * A project over either is refused at once (RATE_LIMITED / 429 with a retry time), so a project
 * that loops heavy queries holds at most its own few slots of the process and of ClickHouse
 * (whose time is shared between projects besides, FairScheduler).
 */
export class ProjectLimiter {
  private readonly projects = new Map<string, ProjectState>();

  constructor(
    private readonly limits: ApiLimits,
    private readonly now: () => number = () => performance.now(),
  ) {}

  admit(projectId: string): Admission {
    const now = this.now();
    const state = this.state(projectId, now);
    if (state.inFlight >= this.limits.concurrentRequests) return { admitted: false, retryAfterSeconds: 1, reason: 'concurrency' };
    if (state.tokens < 1)
      return {
        admitted: false,
        retryAfterSeconds: Math.max(1, Math.ceil((1 - state.tokens) / this.limits.requestsPerSecond)),
        reason: 'rate',
      };
    state.tokens -= 1;
    state.inFlight++;
    let released = false;
    return {
      admitted: true,
      release: () => {
        if (released) return;
        released = true;
        state.inFlight--;
      },
    };
  }

  private state(projectId: string, now: number): ProjectState {
    const capacity = this.limits.requestsPerSecond * BURST_SECONDS;
    let state = this.projects.get(projectId);
    if (!state) {
      if (this.projects.size >= MAX_TRACKED) this.forgetIdle(now, capacity);
      this.projects.set(projectId, (state = { tokens: capacity, updatedAt: now, inFlight: 0 }));
      return state;
    }
    state.tokens = Math.min(capacity, state.tokens + ((now - state.updatedAt) / 1000) * this.limits.requestsPerSecond);
    state.updatedAt = now;
    return state;
  }

  /** Drops keys that would start over the same if asked again: nothing in progress, a full bucket. */
  private forgetIdle(now: number, capacity: number): void {
    for (const [key, state] of this.projects) {
      if (state.inFlight === 0 && state.tokens + ((now - state.updatedAt) / 1000) * this.limits.requestsPerSecond >= capacity)
        this.projects.delete(key);
    }
  }
}

/** Keys tracked before idle ones (nothing in progress, bucket full again) are forgotten. */
const MAX_TRACKED = 100_000;

/** The message a refused request gets. */
export function limitMessage(reason: 'rate' | 'concurrency', limits: ApiLimits): string {
  return reason === 'rate'
    ? `this project is over its API rate (${limits.requestsPerSecond} requests/s); retry after the given seconds`
    : `this project has ${limits.concurrentRequests} API requests in progress already (its limit); retry when one ends`;
}
