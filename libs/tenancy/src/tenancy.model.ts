export interface Tenant {
  id: string;
  name: string;
  createdAt: Date;
}

export interface Project {
  id: string;
  tenantId: string;
  name: string;
  createdAt: Date;
}

export interface ApiKey {
  id: string;
  tenantId: string;
  projectId: string;
  name: string | null;
  prefix: string;
  createdAt: Date;
  revokedAt: Date | null;
  lastUsedAt: Date | null;
}

/** What an API key grants: one project of one tenant. Every stored row carries both ids. */
export interface ProjectScope {
  tenantId: string;
  projectId: string;
  apiKeyId: string;
}
