import type { Registry } from 'prom-client';
import { assertExternalServices, type AppConfig, type Role } from '@spanforge/config';
import { CredentialsFile, type StoredCredentials } from './credentials';
import { lockDataDir } from './data-dir.lock';
import { startHeapRelease } from './heap-release';
import { Logger } from './logger';
import { createMetricsRegistry } from './metrics';
import { ReadinessProbe } from './readiness';
import { ShutdownSequence } from './shutdown';

export type Mode = 'all-in-one' | Role;

/** The secrets every role derives keys and tokens from: from the environment, or (all-in-one) the credentials file. */
export interface Secrets {
  /** Undefined when a scaled-out api runs without ADMIN_TOKEN: admin mutations are then refused. */
  adminToken: string | undefined;
  /** Mixed into every stored key hash and feedback token signature. */
  keyPepper: string;
}

/**
 * What one process owns before any service opens: its configuration, log, shutdown order, readiness
 * checks, metrics and secrets. The Nest modules of `./modules` read it through ProcessModule; the
 * services they open add their own shutdown steps, readiness checks and banner lines to it.
 */
export interface ProcessContext {
  mode: Mode;
  config: AppConfig;
  log: Logger;
  shutdown: ShutdownSequence;
  readiness: ReadinessProbe;
  metrics: Registry;
  secrets: Secrets;
  /** How each dependency this process opened is provided, for the startup banner (filled in as they open). */
  services: { postgres?: string; clickhouse?: string; queue?: string };
  /** All-in-one only: the credentials file (admin token, pepper, development project). */
  credentials?: { file: string; created: boolean; stored: StoredCredentials };
}

/**
 * The steps before any dependency opens: check that a scaled-out role was given its external
 * services; in the all-in-one, take the DATA_DIR lock (a second process there would stop the
 * first one's PostgreSQL) and load or create the credentials file.
 */
export async function prepareProcess(config: AppConfig, mode: Mode): Promise<ProcessContext> {
  const log = new Logger(config.logLevel, mode);
  const shutdown = new ShutdownSequence(log);
  if (mode !== 'all-in-one') assertExternalServices(config, mode);
  let credentials: ProcessContext['credentials'];
  let adminToken = config.adminToken;
  let keyPepper = config.keyPepper;
  if (mode === 'all-in-one') {
    const lock = lockDataDir(config.dataDir);
    shutdown.add('release-data-dir', 'DATA_DIR lock', async () => lock.release());
    try {
      const file = new CredentialsFile(config.dataDir);
      const { credentials: stored, created } = await file.loadOrCreate();
      credentials = { file: file.path, created, stored };
    } catch (error) {
      await shutdown.run();
      throw error;
    }
    adminToken ??= credentials.stored.adminToken;
    keyPepper ??= credentials.stored.keyPepper;
  }
  const metrics = createMetricsRegistry();
  try {
    if (!keyPepper) throw new Error('API_KEY_PEPPER is required');
    startHeapRelease(config.heapReleaseSeconds, log.child('heap'), metrics, shutdown);
  } catch (error) {
    // What was taken so far (the DATA_DIR lock) is given back: a later start in this process may take it.
    await shutdown.run();
    throw error;
  }
  return {
    mode,
    config,
    log,
    shutdown,
    readiness: new ReadinessProbe(),
    metrics,
    secrets: { adminToken, keyPepper },
    services: {},
    credentials,
  };
}
