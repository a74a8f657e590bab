import path from 'node:path';
import type { Pool } from 'pg';
import { projectRoot } from '@spanforge/config';
import type { ClickHouseClient } from '@spanforge/clickhouse';
import { migratePostgres } from '@spanforge/postgres';
import { freshTestDatabase } from '@spanforge/testing';
import { ERASURE_RECLAIM_AFTER_MS, ErasureRepository } from './erasure.repository';

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

  /** A job waiting for a worker, as a finished request leaves it. */
  async function pendingJob(): Promise<string> {
    const { rows: tenants } = await pool.query<{ id: string }>("INSERT INTO tenants (name) VALUES ('erasure claims') RETURNING id");
    const { rows: projects } = await pool.query<{ id: string }>("INSERT INTO projects (tenant_id, name) VALUES ($1, 'p') RETURNING id", [
      tenants[0]!.id,
    ]);
    const { rows } = await pool.query<{ id: string }>(
      "INSERT INTO erasure_jobs (tenant_id, project_id, requested_by, session_id, trace_count) VALUES ($1, $2, 'admin', 's', 1) RETURNING id",
      [tenants[0]!.id, projects[0]!.id],
    );
    return rows[0]!.id;
  }

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

  it('gives a failed attempt back with its reason, to be claimed again at once', async () => {
    const id = await pendingJob();
    const first = await jobs.claim();
    expect(await jobs.release(first!, 'ClickHouse is away')).toBe(true);
    expect(await jobs.job(id)).toMatchObject({ status: 'PENDING', startedAt: null, lastError: 'ClickHouse is away' });
    const again = await jobs.claim();
    expect(again).toMatchObject({ id, status: 'RUNNING' });
    expect(await jobs.complete(again!)).toBe('COMPLETED');
    expect(await jobs.job(id)).toMatchObject({ status: 'COMPLETED', lastError: null });
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
    expect(await jobs.job(id)).toMatchObject({ status: 'PENDING', startedAt: null, completedAt: null, lastError: 'late spans' });

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
