import { DomainError, ErrorCode, notFound } from '@spanforge/errors';
import type { TenancyService } from '@spanforge/tenancy';
import type { RequestContext } from '../graphql/request-context';

/**
 * The project a data-lifecycle request names, if the caller may act on it: a key only on its own
 * project (FORBIDDEN otherwise, saying it can `only` do so), the admin on any project that exists.
 */
export async function namedProject(
  context: RequestContext,
  projectId: string,
  tenancy: TenancyService,
  only: string,
): Promise<{ tenantId: string; projectId: string }> {
  if (context.project) {
    if (context.project.projectId !== projectId)
      throw new DomainError(ErrorCode.FORBIDDEN, `this API key belongs to another project: it can ${only}`);
    return { tenantId: context.project.tenantId, projectId };
  }
  const project = await tenancy.findProject(projectId);
  if (!project) throw notFound(`no project ${projectId}`);
  return { tenantId: project.tenantId, projectId };
}
