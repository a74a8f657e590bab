import { DomainError, ErrorCode } from '@spanforge/errors';
import { credentialFrom, tokensEqual } from './api-key.secret';
import type { ApiKeyVerifier } from './api-key.verifier';
import type { ApiKeyScope, ProjectScope } from './tenancy.model';

/** Who is calling, decided once per request from its credential. */
export type Caller = { kind: 'admin' } | { kind: 'project'; project: ProjectScope } | { kind: 'anonymous' };

/** Where a request carries its credential: HTTP headers, or gRPC metadata read the same way. */
export interface CredentialHeaders {
  authorization?: unknown;
  'x-api-key'?: unknown;
}

/**
 * The one place that turns a credential into a Caller, for every transport (GraphQL, REST, both
 * OTLP servers): the admin token, or a project API key (verified and cached by ApiKeyVerifier;
 * revoked and expired keys are unknown), or nobody.
 */
export class Authenticator {
  constructor(
    private readonly keys: Pick<ApiKeyVerifier, 'verify'>,
    private readonly adminToken: string | undefined,
  ) {}

  fromHeaders(headers: CredentialHeaders): Promise<Caller> {
    return this.fromCredential(credentialFrom(headers.authorization, headers['x-api-key']));
  }

  async fromCredential(credential: string | undefined): Promise<Caller> {
    if (!credential) return ANONYMOUS;
    if (this.adminToken && tokensEqual(credential, this.adminToken)) return ADMIN;
    const project = await this.keys.verify(credential);
    return project ? { kind: 'project', project } : ANONYMOUS;
  }
}

const ADMIN: Caller = { kind: 'admin' };
const ANONYMOUS: Caller = { kind: 'anonymous' };

/**
 * The project a caller acts on for something that needs `scope` (undefined: any key). A missing or unknown credential
 * is UNAUTHENTICATED; the admin token, which belongs to no project, too (it says so); a key
 * without the scope is FORBIDDEN, naming the scope it lacks.
 */
export function projectWithScope(caller: Caller, scope: ApiKeyScope | undefined): ProjectScope {
  if (caller.kind === 'project') {
    if (scope === undefined || caller.project.scopes.includes(scope)) return caller.project;
    throw new DomainError(ErrorCode.FORBIDDEN, `this API key lacks the ${scope} scope (it has ${caller.project.scopes.join(', ')})`);
  }
  if (caller.kind === 'admin') {
    throw new DomainError(
      ErrorCode.UNAUTHENTICATED,
      "a project API key is required: the admin token manages tenants, projects and keys, and reads no project's data",
    );
  }
  throw new DomainError(ErrorCode.UNAUTHENTICATED, 'a valid project API key is required');
}

/**
 * Admin operations: one answer for a missing and a wrong token, so nothing is learned by probing;
 * a valid project API key is a known caller without the right, so FORBIDDEN.
 */
export function requireAdminCaller(caller: Caller): void {
  if (caller.kind === 'admin') return;
  if (caller.kind === 'project')
    throw new DomainError(ErrorCode.FORBIDDEN, 'admin token required: a project API key cannot manage tenants, projects or keys');
  throw new DomainError(ErrorCode.UNAUTHENTICATED, 'admin token required');
}
