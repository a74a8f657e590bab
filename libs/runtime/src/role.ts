import { Module, type DynamicModule, type INestApplicationContext, type LogLevel, type Type } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import type { AppConfig } from '@spanforge/config';
import type { TenancyService } from '@spanforge/tenancy';
import { CredentialsFile } from './credentials';
import { ProcessModule } from './modules/process.module';
import type { ProcessContext } from './process';

/** The root of one process's Nest container: its own pieces (ProcessModule) and the modules of its roles. */
@Module({})
export class RoleRootModule {}

/** The root module of a process running `roles` (one role, or all three in the all-in-one). */
export function roleRoot(context: ProcessContext, roles: Array<Type | DynamicModule>): DynamicModule {
  return { module: RoleRootModule, imports: [ProcessModule.forRoot(context), ...roles] };
}

/** Nest's own log lines: errors and warnings, and more at LOG_LEVEL=debug. */
export function nestLogLevels(config: AppConfig): LogLevel[] {
  return config.logLevel === 'debug' ? ['error', 'warn', 'log', 'debug'] : ['error', 'warn'];
}

/**
 * A role without an HTTP server of Nest's (gateway, worker) as a Nest application context. Creating
 * it opens what its modules provide; a failure throws (the run-role shutdown closes what opened).
 */
export function createRoleContext(context: ProcessContext, roles: Array<Type | DynamicModule>): Promise<INestApplicationContext> {
  return NestFactory.createApplicationContext(roleRoot(context, roles), { logger: nestLogLevels(context.config), abortOnError: false });
}

/**
 * All-in-one, first start: a tenant "development" with a project and an all-scope key, kept in the
 * credentials file and printed once, so a newcomer can send spans right away.
 */
export async function ensureDevelopmentProject(context: ProcessContext, tenancy: TenancyService): Promise<void> {
  const credentials = context.credentials;
  if (!credentials || credentials.stored.development) return;
  const { tenant, project } = await tenancy.createTenant('development');
  const { secret, apiKey } = await tenancy.createApiKey(project.id, 'development');
  credentials.stored = {
    ...credentials.stored,
    development: { tenantId: tenant.id, projectId: project.id, apiKeyId: apiKey.id, apiKey: secret },
  };
  await new CredentialsFile(context.config.dataDir).write(credentials.stored);
  credentials.created = true;
}
