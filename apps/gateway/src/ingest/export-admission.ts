import { RpcCode } from '@spanforge/otlp';
import { ApiKeyScope, type Caller, type ProjectScope } from '@spanforge/tenancy';

/** Who may export spans: a project API key with the INGEST scope. One rule for OTLP/HTTP and OTLP/gRPC. */
export type ExportAdmission =
  { admitted: true; project: ProjectScope } | { admitted: false; httpStatus: 401 | 403; rpcCode: RpcCode; message: string };

export function admitExport(caller: Caller): ExportAdmission {
  if (caller.kind === 'project') {
    if (caller.project.scopes.includes(ApiKeyScope.INGEST)) return { admitted: true, project: caller.project };
    return {
      admitted: false,
      httpStatus: 403,
      rpcCode: RpcCode.PERMISSION_DENIED,
      message: `this API key lacks the INGEST scope (it has ${caller.project.scopes.join(', ')}): exporters need a key with INGEST`,
    };
  }
  const message =
    caller.kind === 'admin'
      ? 'the admin token cannot export spans: send a project API key with the INGEST scope'
      : 'missing, unknown, revoked or expired API key (send Authorization: Bearer <key> or x-api-key)';
  return { admitted: false, httpStatus: 401, rpcCode: RpcCode.UNAUTHENTICATED, message };
}
