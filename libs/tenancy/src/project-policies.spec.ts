import { DEFAULT_POLICY, validatePolicy, type DataPolicy } from '@spanforge/policy';
import { ProjectPolicies } from './project-policies';

/** A policy store whose answer the test changes, counting its reads. */
function store(initial: DataPolicy) {
  let policy = initial;
  let reads = 0;
  let failing = false;
  return {
    repository: {
      find: async (projectId: string) => {
        reads++;
        if (failing) throw new Error('PostgreSQL is away');
        return { projectId, policy, updatedAt: null };
      },
    },
    set: (next: DataPolicy) => (policy = next),
    fail: (on: boolean) => (failing = on),
    reads: () => reads,
  };
}

const REDACT_EMAIL = validatePolicy({ redaction: { detectors: ['EMAIL'] } });
const redacted = (span: { input: string }) => span.input;
const spanWith = (text: string) => ({
  attributes: {},
  resource_attributes: {},
  'events.attributes': [],
  'links.attributes': [],
  input: text,
  output: '',
  status_message: '',
});

describe('ProjectPolicies', () => {
  it('reads a project once per time-to-live, whatever number of jobs ask at once', async () => {
    const s = store(REDACT_EMAIL);
    const policies = new ProjectPolicies(s.repository, 60_000);
    const all = await Promise.all(Array.from({ length: 10 }, () => policies.policyFor('p')));
    expect(s.reads()).toBe(1);
    expect(new Set(all).size).toBe(1);
    const span = spanWith('write to a@example.com');
    expect(all[0]!.applyToSpan(span)).toBe(1);
    expect(redacted(span)).toBe('write to [REDACTED:EMAIL]');
  });

  it('applies a changed policy once its entry expires, and keeps the compiled one when nothing changed', async () => {
    const s = store(DEFAULT_POLICY);
    const policies = new ProjectPolicies(s.repository, 20);
    const first = await policies.policyFor('p');
    expect(first.isNoop).toBe(true);
    await new Promise((r) => setTimeout(r, 30));
    expect(await policies.policyFor('p')).toBe(first);
    s.set(REDACT_EMAIL);
    expect(await policies.policyFor('p')).toBe(first);
    await new Promise((r) => setTimeout(r, 30));
    const changed = await policies.policyFor('p');
    expect(changed.isNoop).toBe(false);
    expect(changed.policy).toEqual(REDACT_EMAIL);
  });

  it('fails the read when the store fails (the job is retried: no span is stored without its policy)', async () => {
    const s = store(REDACT_EMAIL);
    const policies = new ProjectPolicies(s.repository, 60_000);
    s.fail(true);
    await expect(policies.policyFor('p')).rejects.toThrow('PostgreSQL is away');
    s.fail(false);
    expect((await policies.policyFor('p')).isNoop).toBe(false);
  });

  it('gives the start of what a retention keeps, and nothing for a policy that keeps everything', async () => {
    const now = Date.UTC(2026, 11, 1, 12);
    expect(await new ProjectPolicies(store(validatePolicy({ retentionDays: 30 })).repository).keptSince('p', now)).toBe(
      now - 30 * 86_400_000,
    );
    expect(await new ProjectPolicies(store(DEFAULT_POLICY).repository).keptSince('p', now)).toBeUndefined();
  });
});
