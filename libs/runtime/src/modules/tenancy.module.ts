import { Module } from '@nestjs/common';
import {
  ApiKeyVerifier,
  Authenticator,
  DataPolicyRepository,
  ProjectPolicies,
  TenancyRepository,
  TenancyService,
} from '@spanforge/tenancy';
import type { ProcessContext } from '../process';
import { Postgres, PostgresModule } from './postgres.module';
import { PROCESS } from './tokens';

/** Tenants, projects, keys, prices and data policies (PostgreSQL), and the one way a credential becomes a caller. */
@Module({
  imports: [PostgresModule],
  providers: [
    {
      provide: TenancyRepository,
      inject: [PROCESS, Postgres],
      useFactory: (context: ProcessContext, postgres: Postgres) => new TenancyRepository(postgres.pool, context.log.child('tenancy')),
    },
    {
      // Keys are cached; revocations reach every process through PostgreSQL LISTEN.
      provide: ApiKeyVerifier,
      inject: [PROCESS, Postgres, TenancyRepository],
      useFactory: async (context: ProcessContext, postgres: Postgres, repository: TenancyRepository) => {
        const keys = new ApiKeyVerifier(repository, {
          databaseUrl: postgres.url,
          pepper: context.secrets.keyPepper,
          log: context.log.child('api-keys'),
        });
        await keys.start();
        context.shutdown.add('close-clients', 'API key revocation listener', () => keys.close());
        return keys;
      },
    },
    {
      provide: TenancyService,
      inject: [PROCESS, TenancyRepository, ApiKeyVerifier],
      useFactory: (context: ProcessContext, repository: TenancyRepository, keys: ApiKeyVerifier) =>
        new TenancyService(repository, context.secrets.keyPepper, keys),
    },
    { provide: DataPolicyRepository, inject: [Postgres], useFactory: (postgres: Postgres) => new DataPolicyRepository(postgres.pool) },
    // Each project's policy, compiled and cached: the API reads retention from it for every query.
    {
      provide: ProjectPolicies,
      inject: [DataPolicyRepository],
      useFactory: (policies: DataPolicyRepository) => new ProjectPolicies(policies),
    },
    {
      provide: Authenticator,
      inject: [PROCESS, ApiKeyVerifier],
      useFactory: (context: ProcessContext, keys: ApiKeyVerifier) => new Authenticator(keys, context.secrets.adminToken),
    },
  ],
  exports: [TenancyRepository, ApiKeyVerifier, TenancyService, Authenticator, DataPolicyRepository, ProjectPolicies],
})
export class TenancyModule {}
