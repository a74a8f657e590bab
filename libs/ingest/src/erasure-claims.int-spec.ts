import path from 'node:path';
import type { Pool } from 'pg';
import { projectRoot } from '@spanforge/config';
import type { ClickHouseClient } from '@spanforge/clickhouse';
import { migratePostgres } from '@spanforge/postgres';
import { freshTestDatabase } from '@spanforge/testing';
import { ERASURE_RECLAIM_AFTER_MS, ERASURE_RETRY_AFTER_MS, ErasureRepository } from './erasure.repository';

/**
 * Claims of erasure jobs between workers, on a PostgreSQL database of the suite's own (the
 * workers of other suites share the test database and would claim its jobs). Claiming,
 * completing and giving back touch only PostgreSQL: the repository gets no ClickHouse.
 */
describe('erasure job claims', () => {
  let db: Awaited<ReturnType<typeof freshTestDatabase>>;
  let pool: Pool;
  let jobs: ErasureRepository;

  beforeAll(async () => {
    db = await freshTestDatabase();
    pool = db.pool;
    await migratePostgres(pool, path.join(projectRoot(), 'infra', 'postgres'));
    jobs = new ErasureRepository(undefined as unknown as ClickHouseClient, pool);
  });
  afterAll(() => db.drop());

  /** A new project of a new tenant. */
  async function newProject(): Promise<string> {
    const { rows: tenants } = await pool.query<{ id: string }>("INSERT INTO tenants (name) VALUES ('erasure claims') RETURNING id");
    const { rows: projects } = await pool.query<{ id: string }>("INSERT INTO projects (tenant_id, name) VALUES ($1, 'p') RETURNING id", [
      tenants[0]!.id,
    ]);
    return projects[0]!.id;
  }

  /** A job waiting for a worker, as a finished request leaves it: of a new project, or of `projectId`. */
  async function pendingJob(projectId?: string): Promise<string> {
    const project = projectId ?? (await newProject());
    const { rows } = await pool.query<{ id: string }>(
      `INSERT INTO erasure_jobs (tenant_id, project_id, requested_by, session_id, trace_count)
       SELECT tenant_id, id, 'admin', 's', 1 FROM projects WHERE id = $1 RETURNING id`,
      [project],
    );
    return rows[0]!.id;
  }

  /** Seconds from now until the job may be claimed again, as PostgreSQL's clock says. */
  const dueIn = async (id: string) =>
    Number(
      (await pool.query<{ s: number }>('SELECT extract(epoch FROM due_at - now()) AS s FROM erasure_jobs WHERE id = $1', [id])).rows[0]!.s,
    );
  /** Makes a job due now, as if its back-off had passed. */
  const due = (id: string) => pool.query('UPDATE erasure_jobs SET due_at = now() WHERE id = $1', [id]);

  /** Makes a claim look abandoned: as if its worker took it longer ago than the reclaim delay. */
  const age = (id: string) =>
    pool.query('UPDATE erasure_jobs SET started_at = started_at - make_interval(secs => $2) WHERE id = $1', [
      id,
      ERASURE_RECLAIM_AFTER_MS / 1000 + 1,
    ]);

  it('lets a slow worker whose job was claimed again neither give it back nor complete it; the new holder does', async () => {
    const id = await pendingJob();
    const slow = await jobs.claim();
    expect(slow).toMatchObject({ id, status: 'RUNNING' });
    expect(await jobs.claim()).toBeUndefined();
    await age(id);
    const holder = await jobs.claim();
    expect(holder).toMatchObject({ id, status: 'RUNNING' });

    // The slow worker's attempt fails: giving the job back would let a third worker run it beside the holder.
    expect(await jobs.release(slow!, 'ClickHouse is away')).toBe(false);
    expect(await jobs.job(id)).toMatchObject({ status: 'RUNNING', startedAt: holder!.startedAt, lastError: null });
    expect(await jobs.claim()).toBeUndefined();
    // Or it finishes: the holder still runs the job, and completes it itself.
    expect(await jobs.complete(slow!)).toBeUndefined();
    expect(await jobs.job(id)).toMatchObject({ status: 'RUNNING', completedAt: null });

    expect(await jobs.complete(holder!)).toBe('COMPLETED');
    expect(await jobs.job(id)).toMatchObject({ status: 'COMPLETED', lastError: null });
    // A completed job is given back by no one.
    expect(await jobs.release(holder!, 'late')).toBe(false);
    expect(await jobs.job(id)).toMatchObject({ status: 'COMPLETED' });
  });

  it("gives a failed attempt back with its reason, to be claimed again after a back-off that doubles; others' jobs go meanwhile", async () => {
    const id = await pendingJob();
    const other = await pendingJob();
    const first = await jobs.claim();
    expect(first).toMatchObject({ id, status: 'RUNNING' });
    expect(await jobs.release(first!, 'ClickHouse is away')).toBe(true);
    expect(await jobs.job(id)).toMatchObject({ status: 'PENDING', startedAt: first!.startedAt, lastError: 'ClickHouse is away' });
    // Asked before the other, it waits its back-off: the other project's job goes first.
    const retryAfter = ERASURE_RETRY_AFTER_MS / 1000;
    expect(await dueIn(id)).toBeGreaterThan(retryAfter - 1);
    expect(await dueIn(id)).toBeLessThanOrEqual(retryAfter);
    const next = await jobs.claim();
    expect(next).toMatchObject({ id: other });
    expect(await jobs.complete(next!)).toBe('COMPLETED');
    expect(await jobs.claim()).toBeUndefined();

    // Due again, it fails again: twice the wait.
    await due(id);
    const second = await jobs.claim();
    expect(second).toMatchObject({ id, status: 'RUNNING' });
    expect(await jobs.release(second!, 'ClickHouse is still away')).toBe(true);
    expect(await dueIn(id)).toBeGreaterThan(2 * retryAfter - 1);
    expect(await dueIn(id)).toBeLessThanOrEqual(2 * retryAfter);

    await due(id);
    const third = await jobs.claim();
    expect(await jobs.complete(third!)).toBe('COMPLETED');
    expect(await jobs.job(id)).toMatchObject({ status: 'COMPLETED', lastError: null });
    // Completed, its failures are forgotten: a later failure waits the first back-off again.
    await jobs.runAgain({ tenantId: '', projectId: third!.projectId }, [id], 'late spans');
    const fourth = await jobs.claim();
    expect(await jobs.release(fourth!, 'ClickHouse is away once more')).toBe(true);
    expect(await dueIn(id)).toBeLessThanOrEqual(retryAfter);
    await due(id);
    expect(await jobs.complete((await jobs.claim())!)).toBe('COMPLETED');
  });

  it('takes turns between projects: a project with many jobs holds up no other, and one running holds no second worker', async () => {
    const busy = await newProject();
    const many = [await pendingJob(busy), await pendingJob(busy), await pendingJob(busy)];
    const [quiet, later] = [await pendingJob(), await pendingJob()];
    // Two workers: the first takes the busy project's oldest; the second, not its next, but the quiet one's.
    const a = await jobs.claim();
    const b = await jobs.claim();
    expect([a!.id, b!.id]).toEqual([many[0], quiet]);
    // Every project's first turn before any second: then the busy project's, in the order asked.
    const c = await jobs.claim();
    expect(c!.id).toBe(later);
    for (const job of [a, b, c]) expect(await jobs.complete(job!)).toBe('COMPLETED');
    const rest = [(await jobs.claim())!, (await jobs.claim())!];
    expect(rest.map((job) => job.id)).toEqual([many[1], many[2]]);
    for (const job of rest) expect(await jobs.complete(job)).toBe('COMPLETED');

    // One worker, one job at a time: once a project's job completes, another project's goes before its next.
    const another = await newProject();
    const queue = [await pendingJob(another), await pendingJob(another), await pendingJob(another)];
    const other = await pendingJob();
    const order: string[] = [];
    for (let job = await jobs.claim(); job; job = await jobs.claim()) {
      order.push(job.id);
      expect(await jobs.complete(job)).toBe('COMPLETED');
    }
    expect(order).toEqual([queue[0], other, queue[1], queue[2]]);

    // A job that runs again (late spans arrived during its run) keeps its project's place as just served:
    // a project served before it goes first, though its job was asked for later.
    const servedEarlier = await newProject();
    const earlier = await pendingJob(servedEarlier);
    const served = await jobs.claim();
    expect(served!.id).toBe(earlier);
    expect(await jobs.complete(served!)).toBe('COMPLETED');
    const rerunning = await pendingJob(another);
    const running = await jobs.claim();
    expect(running!.id).toBe(rerunning);
    await jobs.runAgain({ tenantId: '', projectId: another }, [rerunning], 'late spans');
    const asked = await pendingJob(servedEarlier);
    expect(await jobs.complete(running!)).toBe('PENDING');
    const next = [(await jobs.claim())!, (await jobs.claim())!];
    expect(next.map((job) => job.id)).toEqual([asked, rerunning]);
    for (const job of next) expect(await jobs.complete(job)).toBe('COMPLETED');

    // A job run again for late spans is due from then: it goes after a job another project asked for before.
    const waiting = await pendingJob();
    await jobs.runAgain({ tenantId: '', projectId: busy }, [many[0]!], 'late spans');
    const first = await jobs.claim();
    const rerun = await jobs.claim();
    expect([first!.id, rerun!.id]).toEqual([waiting, many[0]]);
    for (const job of [first, rerun]) expect(await jobs.complete(job!)).toBe('COMPLETED');
    expect(await jobs.claim()).toBeUndefined();
  });

  it('runs a job again when spans of its traces were stored after it: a completed one at once, a running one after its run', async () => {
    const id = await pendingJob();
    const project = { tenantId: '', projectId: (await jobs.job(id))!.projectId };
    // Asked while it waits: it runs anyway, nothing changes.
    await jobs.runAgain(project, [id], 'late spans');
    expect(await jobs.job(id)).toMatchObject({ status: 'PENDING', lastError: null });

    // Asked while it runs: that run may have deleted before the spans were stored, so it ends waiting again.
    const first = await jobs.claim();
    await jobs.runAgain(project, [id], 'late spans');
    expect(await jobs.job(id)).toMatchObject({ status: 'RUNNING', lastError: 'late spans' });
    expect(await jobs.complete(first!)).toBe('PENDING');
    expect(await jobs.job(id)).toMatchObject({
      status: 'PENDING',
      startedAt: first!.startedAt,
      completedAt: null,
      lastError: 'late spans',
    });

    const second = await jobs.claim();
    expect(await jobs.complete(second!)).toBe('COMPLETED');
    const completed = await jobs.job(id);
    expect(completed).toMatchObject({ status: 'COMPLETED', lastError: null });

    // Asked once completed: it waits again, keeping when it last completed until it completes anew.
    await jobs.runAgain(project, [id], 'more late spans');
    expect(await jobs.job(id)).toMatchObject({ status: 'PENDING', completedAt: completed!.completedAt, lastError: 'more late spans' });
    const third = await jobs.claim();
    expect(third).toMatchObject({ id, completedAt: completed!.completedAt });
    expect(await jobs.complete(third!)).toBe('COMPLETED');
    expect((await jobs.job(id))!.completedAt!.getTime()).toBeGreaterThan(completed!.completedAt!.getTime());
    // Another project's key names no job of this one.
    await jobs.runAgain({ tenantId: '', projectId: '00000000-0000-0000-0000-000000000000' }, [id], 'not yours');
    expect(await jobs.job(id)).toMatchObject({ status: 'COMPLETED', lastError: null });
  });
});
