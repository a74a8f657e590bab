import type { DynamicModule } from '@nestjs/common';
import { Logger, TenancyModule } from '@spanforge/runtime';
import { Authenticator } from '@spanforge/tenancy';
import { GraphQLModule } from '@nestjs/graphql';
import { MercuriusDriver, type MercuriusDriverConfig } from '@nestjs/mercurius';
import { GraphQLError, type GraphQLFormattedError } from 'graphql';
import type { FastifyRequest } from 'fastify';
import { DomainError, ErrorCode } from '@spanforge/errors';
import { DateTimeScalar } from './date-time.scalar';
import { graphqlErrorFormatter } from './error-formatter';
import { withPlainFieldsInline } from './plain-fields';
import { queryLimitsRule } from './query-limits.rule';
import { callerOf } from '../auth/access.guard';
import type { RequestContext } from './request-context';

export type GraphqlDriver = 'mercurius' | 'apollo';

/** How the code-first schema is built, by either driver and by the tests that build it alone. */
export const BUILD_SCHEMA_OPTIONS = { scalarsMap: [{ type: Date, scalar: DateTimeScalar }] };

/**
 * The GraphQL server: Mercurius on Fastify, kept because it measured faster than Apollo on the
 * same resolvers (`npm run bench:graphql-drivers`, BENCHMARKS.md). Apollo stays selectable so the
 * comparison can be run again; its packages are development dependencies.
 */
export function graphqlModule(driver: GraphqlDriver = 'mercurius'): DynamicModule {
  if (driver === 'apollo') return apolloModule();
  return GraphQLModule.forRootAsync<MercuriusDriverConfig>({
    driver: MercuriusDriver,
    imports: [TenancyModule],
    inject: [Authenticator, Logger],
    useFactory: (authenticator: Authenticator, log: Logger) => ({
      path: '/graphql',
      autoSchemaFile: true,
      sortSchema: true,
      buildSchemaOptions: BUILD_SCHEMA_OPTIONS,
      transformSchema: withPlainFieldsInline,
      graphiql: false,
      context: async (request: FastifyRequest): Promise<RequestContext> => ({ caller: await callerOf(request, authenticator) }),
      errorFormatter: graphqlErrorFormatter(log.child('graphql')),
      // Compile a query with graphql-jit after its first use: dashboards repeat the same few queries,
      // and it cut the fixed GraphQL cost by ~0.4 ms a request (`npm run bench:query`, BENCHMARKS.md).
      jit: 1,
      validationRules: [queryLimitsRule],
    }),
  });
}

function apolloModule(): DynamicModule {
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  const { ApolloDriver } = require('@nestjs/apollo') as typeof import('@nestjs/apollo');
  return GraphQLModule.forRootAsync({
    driver: ApolloDriver,
    imports: [TenancyModule],
    inject: [Authenticator],
    useFactory: (authenticator: Authenticator) => ({
      path: '/graphql',
      autoSchemaFile: true,
      sortSchema: true,
      buildSchemaOptions: BUILD_SCHEMA_OPTIONS,
      transformSchema: withPlainFieldsInline,
      playground: false,
      introspection: false,
      // @as-integrations/fastify calls the context function with (request, reply).
      context: async (request: FastifyRequest): Promise<RequestContext> => ({ caller: await callerOf(request, authenticator) }),
      validationRules: [queryLimitsRule],
      formatError: (formatted: GraphQLFormattedError, error: unknown): GraphQLFormattedError => {
        const original = (error as GraphQLError).originalError;
        if (original instanceof DomainError) return { ...formatted, message: original.message, extensions: { code: original.code } };
        return original && !(original instanceof GraphQLError)
          ? { message: 'internal error', path: formatted.path, extensions: { code: ErrorCode.INTERNAL } }
          : formatted;
      },
    }),
  });
}
