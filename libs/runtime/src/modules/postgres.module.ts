import path from 'node:path';
import { Module } from '@nestjs/common';
import type { Pool } from 'pg';
import { projectRoot } from '@spanforge/config';
import { createPostgresPool, migratePostgres, startEmbeddedPostgres } from '@spanforge/postgres';
import type { ProcessContext } from '../process';
import { PROCESS } from './tokens';

/** The process's PostgreSQL: a migrated pool, and the URL (the queue's PostgreSQL backend and LISTEN use it too). */
export class Postgres {
  constructor(
    readonly pool: Pool,
    readonly url: string,
  ) {}
}

/** Embedded PostgreSQL when DATABASE_URL is unset (all-in-one), else the external one; migrated before use. */
async function openPostgres(context: ProcessContext): Promise<Postgres> {
  const { config, log, shutdown, readiness } = context;
  let url = config.databaseUrl;
  context.services.postgres = 'external PostgreSQL';
  if (!url) {
    const started = performance.now();
    const embedded = await startEmbeddedPostgres({ dataDir: config.dataDir, log: (line) => log.debug(line) });
    shutdown.add('stop-services', 'embedded PostgreSQL', () => embedded.stop());
    url = embedded.url;
    context.services.postgres = `embedded PostgreSQL 17 at ${embedded.clusterDir}`;
    log.debug(`embedded PostgreSQL ready in ${Math.round(performance.now() - started)} ms`);
  }
  const pool = createPostgresPool(url, undefined, log.child('postgres'));
  shutdown.add('close-clients', 'PostgreSQL pool', () => pool.end());
  const migrations = await migratePostgres(pool, path.join(projectRoot(), 'infra', 'postgres'), log.child('postgres'));
  if (migrations.applied.length) log.info(`PostgreSQL migrations applied: ${migrations.applied.join(', ')}`);
  readiness.add('postgres', async () => {
    await pool.query('SELECT 1');
  });
  return new Postgres(pool, url);
}

@Module({
  providers: [{ provide: Postgres, inject: [PROCESS], useFactory: openPostgres }],
  exports: [Postgres],
})
export class PostgresModule {}
