export interface Tenant {
  id: string;
  name: string;
  createdAt: Date;
  /** Spans a calendar month (UTC) the gateways accept for all its projects together; null: no quota. */
  monthlySpans: number | null;
}

export interface Project {
  id: string;
  tenantId: string;
  name: string;
  createdAt: Date;
}

/** What a key may do in its project. */
export enum ApiKeyScope {
  /** Send spans (OTLP) and feedback. */
  INGEST = 'INGEST',
  /** Query the project's data: GraphQL queries, the waterfall, report downloads, usage. */
  READ = 'READ',
  /** Change the project's configuration: report schedules, score configs, feedback tokens. */
  MANAGE = 'MANAGE',
}

export const ALL_SCOPES: readonly ApiKeyScope[] = [ApiKeyScope.INGEST, ApiKeyScope.READ, ApiKeyScope.MANAGE];

export interface ApiKey {
  id: string;
  tenantId: string;
  projectId: string;
  name: string | null;
  prefix: string;
  scopes: ApiKeyScope[];
  createdAt: Date;
  /** null: the key does not expire. */
  expiresAt: Date | null;
  revokedAt: Date | null;
  lastUsedAt: Date | null;
}

/** What an API key grants: one project of one tenant, within its scopes. Every stored row carries both ids. */
export interface ProjectScope {
  tenantId: string;
  projectId: string;
  apiKeyId: string;
  scopes: readonly ApiKeyScope[];
}
