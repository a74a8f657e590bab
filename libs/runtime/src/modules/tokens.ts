/**
 * Injection tokens for what has no class of its own. Services with a class (TenancyService,
 * FeedbackService, Logger, ShutdownSequence, FairScheduler…) are injected by their class.
 */

/** The process's ProcessContext (mode, secrets, service descriptions). */
export const PROCESS = Symbol('ProcessContext');
/** The process's AppConfig. */
export const CONFIG = Symbol('AppConfig');
/** The ClickHouse client (migrated), shared by every reader and writer of the process. */
export const CLICKHOUSE = Symbol('ClickHouseClient');
/** The queue backend (BullMQ on Redis, or on PostgreSQL). */
export const QUEUES = Symbol('QueueBackend');
