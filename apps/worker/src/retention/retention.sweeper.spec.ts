import { RetentionSweeper, type RetainingProject } from './retention.sweeper';

const A: RetainingProject = { tenantId: 't', projectId: 'a', retentionDays: 7 };
const B: RetainingProject = { tenantId: 't', projectId: 'b', retentionDays: 30 };

function sweeper(overrides: Partial<ConstructorParameters<typeof RetentionSweeper>[0]> = {}) {
  const said: string[] = [];
  const swept: string[] = [];
  const s = new RetentionSweeper({
    projects: async () => [A, B],
    removeOutlived: async (project) => {
      swept.push(project.projectId);
      return project === A ? ['spans', 'traces'] : [];
    },
    expireReports: async () => 2,
    log: { info: (m) => said.push(`info ${m}`), error: (m, e) => said.push(`error ${m}: ${(e as Error).message}`) },
    ...overrides,
  });
  return { s, said, swept };
}

describe('RetentionSweeper', () => {
  it('sweeps every project with a retention and says what it deleted and emptied', async () => {
    const { s, said, swept } = sweeper();
    await s.sweep();
    expect(swept).toEqual(['a', 'b']);
    expect(said).toEqual([
      "info retention: 2 cost report(s) past their project's retention emptied",
      'info retention: project a: rows older than its 7-day retention, stored before it, deleted from spans, traces',
    ]);
  });

  it('goes on past a failing project or report sweep, saying why, and tries again next time', async () => {
    const { s, said, swept } = sweeper({
      expireReports: async () => {
        throw new Error('PostgreSQL is away');
      },
      removeOutlived: async (project) => {
        if (project === A) throw new Error('too many parts');
        swept.push(project.projectId);
        return [];
      },
    });
    await s.sweep();
    expect(swept).toEqual(['b']);
    expect(said).toEqual([
      'error retention: emptying expired cost reports failed; the next sweep tries again: PostgreSQL is away',
      'error retention: project a: deleting rows past its retention failed; the next sweep tries again: too many parts',
    ]);
  });

  it('stops after the project being swept, and sweeps a minute after start', async () => {
    let finish!: (tables: string[]) => void;
    const { s, swept } = sweeper({
      firstSweepMs: 0,
      removeOutlived: (project) => {
        swept.push(project.projectId);
        return new Promise((resolve) => (finish = resolve));
      },
    });
    s.start();
    while (swept.length === 0) await new Promise((r) => setTimeout(r, 1));
    let stopped = false;
    const stopping = s.stop().then(() => (stopped = true));
    await new Promise((r) => setImmediate(r));
    expect(stopped).toBe(false);
    finish([]);
    await stopping;
    // Project b was not begun.
    expect(swept).toEqual(['a']);
  });
});
