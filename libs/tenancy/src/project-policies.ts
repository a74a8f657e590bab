import { compilePolicy, type CompiledPolicy } from '@spanforge/policy';
import type { DataPolicyRepository } from './data-policy.repository';

const DAY_MS = 86_400_000;

/** A policy change reaches every worker within this time (docs/data-policy.md promises 30 s; a retention change, every answer). */
export const POLICY_TTL_MS = 15_000;

interface Cached {
  /** The policy as JSON: a re-read that finds the same policy keeps the compiled one. */
  json: string;
  compiled: CompiledPolicy;
  expiresAt: number;
}

/**
 * Each project's data policy, compiled, cached for POLICY_TTL_MS. Concurrent jobs of a project
 * whose entry expired share one read. A read that fails fails the job (it is retried): spans are
 * never stored without the policy they are owed.
 */
export class ProjectPolicies {
  private readonly cache = new Map<string, Cached>();
  private readonly reading = new Map<string, Promise<CompiledPolicy>>();

  constructor(
    private readonly repository: Pick<DataPolicyRepository, 'find'>,
    private readonly ttlMs = POLICY_TTL_MS,
  ) {}

  policyFor(projectId: string): Promise<CompiledPolicy> | CompiledPolicy {
    const cached = this.cache.get(projectId);
    if (cached && cached.expiresAt > Date.now()) return cached.compiled;
    let read = this.reading.get(projectId);
    if (!read) {
      read = this.read(projectId, cached).finally(() => this.reading.delete(projectId));
      this.reading.set(projectId, read);
    }
    return read;
  }

  /**
   * The start of what the project keeps (`now` minus its retention) in ms, or undefined when its
   * policy keeps everything. Reads leave older rows out; the worker refuses spans that arrive older.
   */
  async keptSince(projectId: string, now = Date.now()): Promise<number | undefined> {
    const { retentionDays } = (await this.policyFor(projectId)).policy;
    return retentionDays === null ? undefined : now - retentionDays * DAY_MS;
  }

  private async read(projectId: string, previous: Cached | undefined): Promise<CompiledPolicy> {
    const { policy } = await this.repository.find(projectId);
    const json = JSON.stringify(policy);
    const compiled = previous?.json === json ? previous.compiled : compilePolicy(policy);
    this.cache.set(projectId, { json, compiled, expiresAt: Date.now() + this.ttlMs });
    return compiled;
  }
}
