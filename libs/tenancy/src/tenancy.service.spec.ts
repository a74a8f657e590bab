import { DomainError, ErrorCode } from '@spanforge/errors';
import { PROJECT_NAME_CONSTRAINT, isUniqueViolation, type TenancyRepository } from './tenancy.repository';
import { TenancyService } from './tenancy.service';

const TENANT = '6f1c1d4e-4c9b-4d8e-9a57-1d2f3e4a5b6c';

function serviceWith(createProject: TenancyRepository['createProject']): TenancyService {
  return new TenancyService({ createProject } as unknown as TenancyRepository, 'pepper-0123456789abcdef');
}

describe('TenancyService.createProject', () => {
  it('creates the project', async () => {
    const project = { id: 'p', tenantId: TENANT, name: 'checkout', createdAt: new Date(0) };
    await expect(serviceWith(async () => project).createProject(TENANT, ' checkout ')).resolves.toBe(project);
  });

  it("answers BAD_USER_INPUT only for PostgreSQL's unique_violation on the project name", async () => {
    const taken = Object.assign(new Error('duplicate key value violates unique constraint'), {
      code: '23505',
      constraint: PROJECT_NAME_CONSTRAINT,
    });
    const error = await serviceWith(async () => Promise.reject(taken))
      .createProject(TENANT, 'checkout')
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(DomainError);
    expect((error as DomainError).code).toBe(ErrorCode.BAD_USER_INPUT);
    expect((error as Error).message).toBe('the tenant already has a project named "checkout"');
  });

  it('lets every other database failure through as itself, never as "the name is free" or "taken"', async () => {
    for (const failure of [
      Object.assign(new Error('Connection terminated unexpectedly'), {}),
      Object.assign(new Error('canceling statement due to statement timeout'), { code: '57014' }),
      Object.assign(new Error('duplicate key on another constraint'), { code: '23505', constraint: 'projects_pkey' }),
    ]) {
      await expect(serviceWith(async () => Promise.reject(failure)).createProject(TENANT, 'checkout')).rejects.toBe(failure);
    }
  });

  it('answers NOT_FOUND for a tenant that does not exist', async () => {
    await expect(serviceWith(async () => undefined).createProject(TENANT, 'checkout')).rejects.toThrow(/no tenant with id/);
  });
});

describe('isUniqueViolation', () => {
  it('is true for SQLSTATE 23505 only', () => {
    expect(isUniqueViolation({ code: '23505' })).toBe(true);
    expect(isUniqueViolation({ code: '23503' })).toBe(false);
    expect(isUniqueViolation(new Error('23505'))).toBe(false);
    expect(isUniqueViolation(null)).toBe(false);
    expect(isUniqueViolation({ code: '23505', constraint: 'other' }, PROJECT_NAME_CONSTRAINT)).toBe(false);
  });
});
