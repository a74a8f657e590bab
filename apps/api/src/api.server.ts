import type { DynamicModule } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { FastifyAdapter, type NestFastifyApplication } from '@nestjs/platform-fastify';
import type { FastifyReply, FastifyRequest, RouteOptions } from 'fastify';
import type { ApiLimits } from '@spanforge/config';
import { ErrorCode } from '@spanforge/errors';
import { nestLogLevels, type ProcessContext } from '@spanforge/runtime';
import { Authenticator } from '@spanforge/tenancy';
import { callerOf } from './auth/access.guard';
import { ProjectLimiter, limitMessage } from './auth/project-limiter';
import { allowBrowserFeedback } from './feedback/feedback.cors';
import { sendFailure } from './rest-errors';

export interface RunningServer {
  url: string;
  port: number;
  close(): Promise<void>;
}

/**
 * Nest installs its exception layer as Fastify's error handler only after it has registered the
 * routes, and in Fastify 5 a route keeps the handler in force when it was registered: the routes
 * would use Fastify's default, and Nest's late call only makes Fastify warn that a handler is being
 * replaced. The API's own handler is installed first (so every route uses it) and Nest's call is
 * left out; errors inside controllers still go through Nest's filters (ApiExceptionFilter).
 */
class ApiFastifyAdapter extends FastifyAdapter {
  override setErrorHandler(): ReturnType<FastifyAdapter['setErrorHandler']> {
    return this.getInstance();
  }
}

/**
 * Mercurius declares a JSON schema for its answers, so Fastify writes them with a serializer
 * compiled from it. That schema says nothing about `data` (any object), so the serializer only adds
 * work over JSON.stringify (~25 % on a 23 KB answer), and it types error paths as strings, writing
 * list indexes as "0" where the GraphQL spec has integers. GraphQL answers are written as they are.
 */
function writeGraphqlAnswersAsJson(route: RouteOptions): void {
  if (route.url === '/graphql' && route.schema?.response) route.schema = { ...route.schema, response: undefined };
}

/**
 * Routes that do not count against a project's API limits: anyone may call the open ones
 * (AccessGuard knows them as @Public: health, the index, the explorer's page and files), and feedback is ingest (app backends post scores in bursts),
 * not a query.
 */
const UNLIMITED_ROUTES = new Set(['/', '/healthz', '/readyz', '/metrics', '/v1/feedback', '/graphiql', '/graphiql/assets/:file']);

/**
 * Before a request's body is read: a GraphQL request without a valid credential is refused (whatever
 * its size or nesting, an anonymous document costs one key lookup), and a project key's request
 * counts against its project's limits (ProjectLimiter) until its answer is sent.
 */
function admitRequests(authenticator: Authenticator, limits: ApiLimits) {
  const limiter = new ProjectLimiter(limits);
  const graphqlError = (reply: FastifyReply, message: string, extensions: Record<string, unknown>) =>
    reply.header('content-type', 'application/json; charset=utf-8').send({ data: null, errors: [{ message, extensions }] });
  return {
    onRequest: async (request: FastifyRequest, reply: FastifyReply) => {
      const route = request.routeOptions.url;
      if (route === undefined || UNLIMITED_ROUTES.has(route)) return;
      const graphql = route === '/graphql';
      const caller = await callerOf(request, authenticator);
      if (graphql && caller.kind === 'anonymous')
        return graphqlError(reply, 'a valid project API key or the admin token is required', { code: ErrorCode.UNAUTHENTICATED });
      if (caller.kind !== 'project') return;
      const admission = limiter.admit(caller.project.projectId);
      if (admission.admitted) {
        request.releaseLimit = admission.release;
        return;
      }
      const message = limitMessage(admission.reason, limits);
      reply.header('retry-after', String(admission.retryAfterSeconds));
      if (graphql) return graphqlError(reply, message, { code: ErrorCode.RATE_LIMITED, retryAfterSeconds: admission.retryAfterSeconds });
      return reply.status(429).send({ error: { code: ErrorCode.RATE_LIMITED, message } });
    },
    release: async (request: FastifyRequest) => {
      request.releaseLimit?.();
    },
    /** One operation per request: a batch (a JSON array) would multiply the work behind one admission. */
    refuseBatches: async (request: FastifyRequest, reply: FastifyReply) => {
      if (request.routeOptions.url !== '/graphql' || !Array.isArray(request.body)) return;
      return graphqlError(reply, 'batched requests (a JSON array of operations) are not supported: send one operation per request', {
        code: ErrorCode.BAD_USER_INPUT,
      });
    },
  };
}

declare module 'fastify' {
  interface FastifyRequest {
    /** Ends this request's turn in its project's limits (set when admitted). */
    releaseLimit?: () => void;
  }
}

/**
 * The api as a Nest application on Fastify, for `root`: ApiModule alone (the api role), or ApiModule
 * with the gateway's and worker's modules (all-in-one). Creating it opens every service the modules
 * provide (connections, migrations); routes are registered and the port taken by listenApi.
 */
export async function createApiApplication(context: ProcessContext, root: DynamicModule): Promise<NestFastifyApplication> {
  const adapter = new ApiFastifyAdapter({ bodyLimit: 1024 * 1024 });
  const fastify = adapter.getInstance();
  fastify.addHook('onRoute', writeGraphqlAnswersAsJson);
  allowBrowserFeedback(fastify);
  // Fastify refuses some requests before Nest sees them (a JSON body that does not parse): same shape as every other REST refusal.
  fastify.setErrorHandler((error, _request, reply) => sendFailure(reply, error, context.log));
  const app = await NestFactory.create<NestFastifyApplication>(root, adapter, {
    logger: nestLogLevels(context.config),
    abortOnError: false,
  });
  // Added before the routes are (they are registered by listen), so every route has them.
  const admission = admitRequests(app.get(Authenticator), context.config.apiLimits);
  fastify.addHook('onRequest', admission.onRequest);
  fastify.addHook('onResponse', admission.release);
  fastify.addHook('onRequestAbort', admission.release);
  fastify.addHook('preHandler', admission.refuseBatches);
  return app;
}

/** Registers the routes, listens on API_PORT, and adds the first shutdown step (stop accepting). */
export async function listenApi(context: ProcessContext, app: NestFastifyApplication): Promise<RunningServer> {
  await app.listen(context.config.ports.api, context.config.host);
  const address = app.getHttpServer().address();
  const port = typeof address === 'object' && address ? address.port : context.config.ports.api;
  const close = () => app.close();
  context.shutdown.add('stop-accepting', 'api server', close);
  return { url: `http://localhost:${port}`, port, close };
}
