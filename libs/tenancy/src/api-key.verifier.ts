import { hash } from 'node:crypto';
import { Client } from 'pg';
import { ThrottledWarning, reasonOf, stderrLog, type ErrorLog } from '@spanforge/postgres';
import { parseSecret, secretMatches } from './api-key.secret';
import type { ProjectScope } from './tenancy.model';
import { KEY_REVOKED_CHANNEL, type TenancyRepository } from './tenancy.repository';

export interface ApiKeyVerifierOptions {
  databaseUrl: string;
  pepper: string;
  /** How long a verified key is trusted without asking PostgreSQL; revocation evicts sooner. */
  ttlMs?: number;
  /** How long an unknown secret is remembered, so a flood of bad keys does not reach PostgreSQL. */
  negativeTtlMs?: number;
  maxEntries?: number;
  /** Where a lost revocation channel, failed reconnects and failed last-use writes are said. */
  log?: ErrorLog;
}

interface CacheEntry {
  scope: ProjectScope | undefined;
  expiresAt: number;
}

const TOUCH_INTERVAL_MS = 60_000;

/**
 * Turns a bearer secret into a project scope. Hits are served from memory; every process LISTENs
 * on PostgreSQL for revocations and evicts at once, so a revoked key stops working everywhere
 * within the NOTIFY latency (milliseconds). While the LISTEN connection is down the cache is
 * bypassed, so the 1 s revocation promise holds even then.
 */
export class ApiKeyVerifier {
  private readonly cache = new Map<string, CacheEntry>();
  /**
   * Unknown secrets, apart from the known ones: a flood of random keys evicts only other unknown
   * ones, never a valid key from `cache` (which would send every request of real callers to PostgreSQL).
   */
  private readonly unknown = new Map<string, number>();
  /** isActive's answers by key id. */
  private readonly activeById = new Map<string, { active: boolean; expiresAt: number }>();
  private readonly lastTouched = new Map<string, number>();
  private readonly ttlMs: number;
  private readonly negativeTtlMs: number;
  private readonly maxEntries: number;
  private listener: Client | undefined;
  private listening = false;
  private closed = false;
  /** Bumped by every revocation; a lookup that raced one does not fill the cache. */
  private epoch = 0;
  private reconnectTimer: NodeJS.Timeout | undefined;
  private readonly log: ErrorLog;
  /** Reconnects are tried every second while PostgreSQL is away: said at most once per 10 s. */
  private readonly reconnectFailed: ThrottledWarning;
  /** One failed last-use write per key and minute, for every key in use while PostgreSQL is away: at most one line per 10 s. */
  private readonly touchFailed: ThrottledWarning;

  constructor(
    private readonly repository: TenancyRepository,
    private readonly options: ApiKeyVerifierOptions,
  ) {
    this.ttlMs = options.ttlMs ?? 60_000;
    this.negativeTtlMs = options.negativeTtlMs ?? 2_000;
    this.maxEntries = options.maxEntries ?? 50_000;
    this.log = options.log ?? stderrLog('api-keys');
    this.reconnectFailed = new ThrottledWarning(this.log);
    this.touchFailed = new ThrottledWarning(this.log);
  }

  async start(): Promise<void> {
    await this.listen();
  }

  get isListening(): boolean {
    return this.listening;
  }

  async verify(secret: string | undefined): Promise<ProjectScope | undefined> {
    if (!secret) return undefined;
    const parsed = parseSecret(secret);
    if (!parsed) return undefined;
    // One-shot hash: every authenticated request computes this, and it is ~2x cheaper than createHash().update().digest().
    const digest = hash('sha256', secret, 'base64');
    const now = Date.now();
    if (this.listening && (this.unknown.get(digest) ?? 0) > now) return undefined;
    const cached = this.listening ? this.cache.get(digest) : undefined;
    if (cached && cached.expiresAt > now) {
      if (cached.scope) this.touch(cached.scope.apiKeyId, now);
      return cached.scope;
    }
    const epoch = this.epoch;
    const stored = await this.repository.findKeyByLookupId(parsed.lookupId);
    const valid =
      stored &&
      !stored.revokedAt &&
      !(stored.expiresAt && stored.expiresAt.getTime() <= now) &&
      secretMatches(secret, stored.salt, stored.hash, this.options.pepper);
    const scope = valid
      ? { tenantId: stored.tenantId, projectId: stored.projectId, apiKeyId: stored.id, scopes: stored.scopes }
      : undefined;
    if (this.listening && epoch === this.epoch) this.remember(digest, scope, now, stored?.expiresAt ?? null);
    if (scope) this.touch(scope.apiKeyId, now);
    return scope;
  }

  /**
   * Whether a key (by id) is neither revoked nor expired: for what a key made and that outlives
   * the request (feedback tokens). Cached like verify, evicted by revocations the same way.
   */
  async isActive(apiKeyId: string): Promise<boolean> {
    const now = Date.now();
    const cached = this.listening ? this.activeById.get(apiKeyId) : undefined;
    if (cached && cached.expiresAt > now) return cached.active;
    const epoch = this.epoch;
    const key = await this.repository.findApiKey(apiKeyId);
    const active = !!key && !key.revokedAt && !(key.expiresAt && key.expiresAt.getTime() <= now);
    if (this.listening && epoch === this.epoch) {
      evictOldest(this.activeById, this.maxEntries);
      const expiresAt = now + this.ttlMs;
      this.activeById.set(apiKeyId, { active, expiresAt: key?.expiresAt ? Math.min(expiresAt, key.expiresAt.getTime()) : expiresAt });
    }
    return active;
  }

  /** Drops every cached entry of one key (a revocation seen on the channel, or in this process). */
  evict(apiKeyId: string): void {
    this.epoch++;
    this.activeById.delete(apiKeyId);
    for (const [digest, entry] of this.cache) {
      if (entry.scope?.apiKeyId === apiKeyId) this.cache.delete(digest);
    }
  }

  async close(): Promise<void> {
    this.closed = true;
    clearTimeout(this.reconnectTimer);
    this.listening = false;
    this.reconnectFailed.flush();
    this.touchFailed.flush();
    // At shutdown the connection may already be gone (PostgreSQL stopped first, or it was lost): nothing is left to close then.
    await this.listener
      ?.end()
      .catch((error: unknown) => this.log.debug?.(`closing the API key revocation listener: ${reasonOf(error)} (already closed)`));
  }

  /** A key that expires is trusted from the cache only until it does. */
  private remember(digest: string, scope: ProjectScope | undefined, now: number, keyExpiresAt: Date | null): void {
    if (!scope) {
      evictOldest(this.unknown, this.maxEntries);
      this.unknown.set(digest, now + this.negativeTtlMs);
      return;
    }
    evictOldest(this.cache, this.maxEntries);
    const expiresAt = now + this.ttlMs;
    this.cache.set(digest, { scope, expiresAt: keyExpiresAt ? Math.min(expiresAt, keyExpiresAt.getTime()) : expiresAt });
  }

  /** last_used_at at most once a minute per key from this process; the UPDATE's own guard covers the rest. */
  private touch(apiKeyId: string, now: number): void {
    if (now - (this.lastTouched.get(apiKeyId) ?? 0) < TOUCH_INTERVAL_MS) return;
    this.lastTouched.set(apiKeyId, now);
    // Best effort: the request it serves goes on; the next use a minute later tries again.
    this.repository
      .touchApiKey(apiKeyId)
      .catch((error: unknown) =>
        this.touchFailed.warn(`could not record the use of API key ${apiKeyId} (last_used_at): ${reasonOf(error)}`),
      );
  }

  private async listen(): Promise<void> {
    const client = new Client({ connectionString: this.options.databaseUrl, application_name: 'spanforge-key-revocations' });
    const lost = (reason: string) => {
      if (this.listener !== client) return;
      this.listening = false;
      this.listener = undefined;
      this.cache.clear();
      this.unknown.clear();
      this.activeById.clear();
      this.epoch++;
      // The connection failed already; ending it only frees what is left of it, and may fail for that very reason.
      client.end().catch((error: unknown) => this.log.debug?.(`ending the lost API key revocation connection: ${reasonOf(error)}`));
      if (this.closed) return;
      this.log.warn(`API key revocation channel lost (${reason}); verifying against PostgreSQL until it is back`);
      this.scheduleReconnect();
    };
    this.listener = client;
    client.on('error', (error) => lost(reasonOf(error)));
    client.on('end', () => lost('connection ended'));
    client.on('notification', (message) => {
      if (message.channel === KEY_REVOKED_CHANNEL && message.payload) this.evict(message.payload);
    });
    try {
      await client.connect();
      await client.query(`LISTEN ${KEY_REVOKED_CHANNEL}`);
    } catch (error) {
      this.listener = undefined;
      // The caller reports `error`; ending a client that never connected can fail as well, and says nothing new.
      client.end().catch((endError: unknown) => this.log.debug?.(`ending the failed API key revocation connection: ${reasonOf(endError)}`));
      throw error;
    }
    // Anything cached before the subscription may have missed a revocation.
    this.cache.clear();
    this.unknown.clear();
    this.activeById.clear();
    this.epoch++;
    this.listening = true;
  }

  private scheduleReconnect(): void {
    clearTimeout(this.reconnectTimer);
    this.reconnectTimer = setTimeout(() => {
      this.listen().then(
        () => {
          this.reconnectFailed.flush();
          if (!this.closed) this.log.info?.('API key revocation channel is back; caching verified keys again');
        },
        (error: unknown) => {
          if (this.closed) return;
          this.reconnectFailed.warn(
            `API key revocation channel: reconnecting failed (${reasonOf(error)}); trying again every second, verifying against PostgreSQL meanwhile`,
          );
          this.scheduleReconnect();
        },
      );
    }, 1_000);
    this.reconnectTimer.unref();
  }
}

/** Makes room for one more entry: the oldest one goes (Maps keep insertion order). */
function evictOldest(map: Map<string, unknown>, maxEntries: number): void {
  if (map.size < maxEntries) return;
  const oldest = map.keys().next().value;
  if (oldest !== undefined) map.delete(oldest);
}
