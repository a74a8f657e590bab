/**
 * Each project's share of the ingest queue, as this gateway sees it: exports it queued recently,
 * per project, decayed with a half-life of HALF_LIFE_MS (a flood shows within a second and fades
 * a few seconds after it stops). With several gateways behind a balancer each sees a proportional
 * sample of every project's traffic, so the shares hold without talking to each other.
 *
 * When the queue's backlog is deep (PRESSURE of its cap or more), a project whose share is over
 * its fair share (its 1/n of the projects sending, with slack) gets 429 and is told when to come
 * back; everyone else keeps getting 200, up to OVERFLOW × the cap, where the queue is refused to
 * all (503). So one project filling the queue slows itself, not the others.
 */
export const PRESSURE = 0.5;
export const OVERFLOW = 1.25;
/** A project may have this many times its equal share before it counts as over it. */
const SLACK = 1.5;
const HALF_LIFE_MS = 2_000;
/** Projects with less weight than this are not counted as sending (and are forgotten). */
const NEGLIGIBLE = 0.05;

interface Share {
  weight: number;
  at: number;
}

export type BacklogVerdict = { admit: true } | { admit: false; reason: 'over_share' | 'queue_full' };

export class BacklogShares {
  private readonly shares = new Map<string, Share>();

  constructor(private readonly now: () => number = () => performance.now()) {}

  /** Records one export of this project queued now. */
  record(projectId: string): void {
    const now = this.now();
    const share = this.decayed(projectId, now);
    share.weight += 1;
  }

  /** Whether this project may queue another export, given the queue's depth and cap. */
  verdict(projectId: string, depth: number, cap: number): BacklogVerdict {
    if (depth >= cap * OVERFLOW) return { admit: false, reason: 'queue_full' };
    if (depth < cap * PRESSURE) return { admit: true };
    const now = this.now();
    let total = 0;
    let sending = 0;
    for (const [id, share] of this.shares) {
      const weight = this.decayedWeight(share, now);
      if (weight < NEGLIGIBLE) {
        this.shares.delete(id);
        continue;
      }
      total += weight;
      sending++;
    }
    const mine = this.shares.has(projectId) ? this.decayedWeight(this.shares.get(projectId)!, now) : 0;
    if (total === 0 || sending <= 1) return depth >= cap ? { admit: false, reason: 'over_share' } : { admit: true };
    return mine / total > SLACK / sending ? { admit: false, reason: 'over_share' } : { admit: true };
  }

  private decayed(projectId: string, now: number): Share {
    let share = this.shares.get(projectId);
    if (!share) this.shares.set(projectId, (share = { weight: 0, at: now }));
    share.weight = this.decayedWeight(share, now);
    share.at = now;
    return share;
  }

  private decayedWeight(share: Share, now: number): number {
    return share.weight * 0.5 ** ((now - share.at) / HALF_LIFE_MS);
  }
}
