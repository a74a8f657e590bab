import path from 'node:path';
import type { Pool } from 'pg';
import { Counter, type Registry } from 'prom-client';
import { assertExternalServices, projectRoot, type AppConfig, type Role } from '@spanforge/config';
import {
  FairScheduler,
  clickHouseTarget,
  createClickHouseClient,
  describeTarget,
  migrateClickHouse,
  type ClickHouseClient,
} from '@spanforge/clickhouse';
import { createPostgresPool, migratePostgres, startEmbeddedPostgres } from '@spanforge/postgres';
import { COST_REPORTS_QUEUE, createQueueBackend, type DeliverJob, type FireJob, type QueueBackend } from '@spanforge/queue';
import type { Queue } from 'bullmq';
import { CostReportRepository, CostReportService } from '@spanforge/cost-reports';
import { FeedbackRepository, FeedbackService } from '@spanforge/feedback';
import { ApiKeyVerifier, Authenticator, TenancyRepository, TenancyService } from '@spanforge/tenancy';
import { lockDataDir } from './data-dir.lock';
import { CredentialsFile, type StoredCredentials } from './credentials';
import { Logger } from './logger';
import { createMetricsRegistry } from './metrics';
import { ReadinessProbe } from './readiness';
import { ShutdownSequence } from './shutdown';

export type Mode = 'all-in-one' | Role;

/** Every connection and service a role needs, opened once per process. */
export interface Infrastructure {
  mode: Mode;
  config: AppConfig;
  log: Logger;
  /** Undefined when a scaled-out api runs without ADMIN_TOKEN: admin mutations are then refused. */
  adminToken: string | undefined;
  pg: Pool;
  databaseUrl: string;
  clickhouse: ClickHouseClient;
  queues: QueueBackend;
  tenancy: TenancyService;
  tenancyRepository: TenancyRepository;
  keys: ApiKeyVerifier;
  /** Credential → caller (admin, project key with its scopes, nobody), for every transport. */
  authenticator: Authenticator;
  /** Turns between projects for API statements (embedded chDB runs one statement at a time). */
  querySlots: FairScheduler;
  feedback: FeedbackService;
  costReports: CostReportService;
  readiness: ReadinessProbe;
  metrics: Registry;
  shutdown: ShutdownSequence;
  /** How each dependency is provided, for the startup banner. */
  services: { postgres: string; clickhouse: string; queue: string };
  credentials?: { file: string; created: boolean; stored: StoredCredentials };
}

export async function startInfrastructure(config: AppConfig, mode: Mode): Promise<Infrastructure> {
  const log = new Logger(config.logLevel, mode);
  const shutdown = new ShutdownSequence(log);
  if (mode !== 'all-in-one') assertExternalServices(config, mode);
  try {
    return await openServices(config, mode, log, shutdown);
  } catch (error) {
    // Whatever was opened before the failure is closed again, so a failed start leaves nothing running.
    await shutdown.run();
    throw error;
  }
}

async function openServices(config: AppConfig, mode: Mode, log: Logger, shutdown: ShutdownSequence): Promise<Infrastructure> {
  let credentials: Infrastructure['credentials'];
  let adminToken = config.adminToken;
  let pepper = config.keyPepper;
  if (mode === 'all-in-one') {
    // Before anything starts on DATA_DIR: a second process there would stop the first one's PostgreSQL.
    const lock = lockDataDir(config.dataDir);
    shutdown.add('release-data-dir', 'DATA_DIR lock', async () => lock.release());
    const file = new CredentialsFile(config.dataDir);
    const { credentials: stored, created } = await file.loadOrCreate();
    credentials = { file: file.path, created, stored };
    adminToken ??= stored.adminToken;
    pepper ??= stored.keyPepper;
  }
  if (!pepper) throw new Error('API_KEY_PEPPER is required');

  let databaseUrl = config.databaseUrl;
  let postgresDescription = 'external PostgreSQL';
  if (!databaseUrl) {
    const started = performance.now();
    const embedded = await startEmbeddedPostgres({ dataDir: config.dataDir, log: (line) => log.debug(line) });
    shutdown.add('stop-services', 'embedded PostgreSQL', () => embedded.stop());
    databaseUrl = embedded.url;
    postgresDescription = `embedded PostgreSQL 17 at ${embedded.clusterDir}`;
    log.debug(`embedded PostgreSQL ready in ${Math.round(performance.now() - started)} ms`);
  }
  const pg = createPostgresPool(databaseUrl, undefined, log.child('postgres'));
  shutdown.add('close-clients', 'PostgreSQL pool', () => pg.end());
  const pgMigrations = await migratePostgres(pg, path.join(projectRoot(), 'infra', 'postgres'), log.child('postgres'));
  if (pgMigrations.applied.length) log.info(`PostgreSQL migrations applied: ${pgMigrations.applied.join(', ')}`);

  const target = clickHouseTarget(config);
  const clickhouse = createClickHouseClient(target);
  shutdown.add('close-clients', 'ClickHouse client', () => clickhouse.close());
  const chMigrations = await migrateClickHouse(clickhouse, path.join(projectRoot(), 'infra', 'clickhouse'));
  if (chMigrations.applied.length) log.info(`ClickHouse migrations applied: ${chMigrations.applied.join(', ')}`);

  const queues = createQueueBackend({ redisUrl: config.redisUrl, databaseUrl, log: log.child('queue') });
  shutdown.add('drain', 'queues and workers', () => queues.close());

  const repository = new TenancyRepository(pg, log.child('tenancy'));
  const keys = new ApiKeyVerifier(repository, { databaseUrl, pepper, log: log.child('api-keys') });
  await keys.start();
  shutdown.add('close-clients', 'API key revocation listener', () => keys.close());
  const tenancy = new TenancyService(repository, pepper, keys);

  const querySlots = new FairScheduler(target.kind === 'embedded' ? 1 : config.clickhouseQuerySlots);
  const readiness = new ReadinessProbe();
  readiness.add('postgres', async () => {
    await pg.query('SELECT 1');
  });
  // A gateway only queues: it takes exports while ClickHouse is away (the worker stores them when
  // it is back), so a balancer must not pull it for that.
  if (mode !== 'gateway') {
    readiness.add('clickhouse', async () => {
      const result = await clickhouse.ping();
      if (!result.success) throw result.error;
    });
  }
  readiness.add('queue', () => queues.ping());

  if (credentials && !credentials.stored.development) {
    const { tenant, project } = await tenancy.createTenant('development');
    const { secret, apiKey } = await tenancy.createApiKey(project.id, 'development');
    credentials.stored = {
      ...credentials.stored,
      development: { tenantId: tenant.id, projectId: project.id, apiKeyId: apiKey.id, apiKey: secret },
    };
    await new CredentialsFile(config.dataDir).write(credentials.stored);
    credentials.created = true;
  }

  const metrics = createMetricsRegistry();
  const unknownTraceFeedback = new Counter({
    name: 'spanforge_feedback_unknown_trace_total',
    help: 'Scores accepted for a trace not stored at the time (kept; they join the trace when it lands)',
    registers: [metrics],
  });
  const feedbackLog = log.child('feedback');
  const feedback = new FeedbackService(
    new FeedbackRepository(clickhouse, pg),
    pepper,
    () => unknownTraceFeedback.inc(),
    (m) => feedbackLog.warn(m),
  );
  shutdown.add('flush', 'feedback writer', () => feedback.close());
  return {
    mode,
    config,
    log,
    adminToken,
    pg,
    databaseUrl,
    clickhouse,
    queues,
    tenancy,
    tenancyRepository: repository,
    keys,
    authenticator: new Authenticator(keys, adminToken),
    querySlots,
    feedback,
    costReports: new CostReportService({
      repository: new CostReportRepository(pg),
      clickhouse,
      queue: queues.queue<FireJob | DeliverJob>(COST_REPORTS_QUEUE) as Queue<FireJob | DeliverJob>,
      projectName: async (projectId) => (await repository.findProject(projectId))?.name ?? projectId,
      allowPrivateWebhooks: config.allowPrivateWebhooks,
      queryLimits: config.queryLimits,
      querySlots,
      warn: (message) => log.warn(message),
    }),
    readiness,
    metrics,
    shutdown,
    services: { postgres: postgresDescription, clickhouse: describeTarget(target), queue: queues.describe() },
    credentials,
  };
}
