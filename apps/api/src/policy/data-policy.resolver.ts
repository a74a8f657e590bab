import { Args, Context, ID, Mutation, Query, Resolver } from '@nestjs/graphql';
import type { DataPolicyInput } from '@spanforge/policy';
import { ApiKeyScope, DataPolicyRepository, TenancyService, type StoredDataPolicy } from '@spanforge/tenancy';
import { AdminOrScope } from '../auth/access.decorators';
import type { RequestContext } from '../graphql/request-context';
import { namedProject } from './project-access';
import { DataPolicyModel, SetDataPolicyInput, type CaptureModeEnum, type DetectorEnum } from './data-policy.model';

function toModel(stored: StoredDataPolicy): DataPolicyModel {
  const { policy } = stored;
  return {
    projectId: stored.projectId,
    retentionDays: policy.retentionDays,
    capture: {
      inputs: policy.capture.inputs as CaptureModeEnum,
      outputs: policy.capture.outputs as CaptureModeEnum,
      maxContentBytes: policy.capture.maxContentBytes,
    },
    redaction: {
      detectors: [...policy.redaction.detectors] as DetectorEnum[],
      patterns: [...policy.redaction.patterns],
      dropAttributes: [...policy.redaction.dropAttributes],
    },
    updatedAt: stored.updatedAt,
  };
}

/** `dataPolicy` and `setDataPolicy`: the admin token for any project, a MANAGE key for its own (docs/data-policy.md). */
@AdminOrScope(ApiKeyScope.MANAGE)
@Resolver()
export class DataPolicyResolver {
  constructor(
    private readonly policies: DataPolicyRepository,
    private readonly tenancy: TenancyService,
  ) {}

  @Query(() => DataPolicyModel, { description: "A project's data policy (admin token, or a MANAGE key of the project)." })
  async dataPolicy(
    @Args('projectId', { type: () => ID, description: 'The project.' }) projectId: string,
    @Context() context: RequestContext,
  ): Promise<DataPolicyModel> {
    await this.admitted(context, projectId);
    return toModel(await this.policies.find(projectId));
  }

  @Mutation(() => DataPolicyModel, {
    description:
      "Changes a project's data policy (admin token, or a MANAGE key of the project). Capture and redaction apply to spans stored from then on, within 30 s; a retention applies to every answer within 30 s, and storage drops expired data within a week.",
  })
  async setDataPolicy(
    @Args('input', { type: () => SetDataPolicyInput, description: 'The change.' }) input: SetDataPolicyInput,
    @Context() context: RequestContext,
  ): Promise<DataPolicyModel> {
    await this.admitted(context, input.projectId);
    const change: DataPolicyInput = {
      ...(input.retentionDays !== undefined ? { retentionDays: input.retentionDays } : {}),
      ...(input.capture !== undefined ? { capture: input.capture } : {}),
      ...(input.redaction !== undefined ? { redaction: input.redaction } : {}),
    };
    return toModel(await this.policies.update(input.projectId, change));
  }

  private async admitted(context: RequestContext, projectId: string): Promise<void> {
    await namedProject(context, projectId, this.tenancy, "manage only its own project's policy");
  }
}
