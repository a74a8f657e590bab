import type { FastifyInstance, FastifyReply, onSendHookHandler } from 'fastify';

const FEEDBACK_PATH = '/v1/feedback';

/**
 * Browsers post feedback cross-origin with a feedback token (the app's page is on the customer's
 * origin, the API on ours), so `POST /v1/feedback` answers CORS preflights and carries
 * `Access-Control-Allow-Origin` on every answer, errors included. Any origin: the bearer is a token
 * in the Authorization header, never a cookie, so an origin gains nothing it does not already hold.
 * The rest of the API stays same-origin only: project keys do not belong in browsers.
 */
export function allowBrowserFeedback(fastify: FastifyInstance): void {
  const allowOrigin = (reply: FastifyReply) => reply.header('access-control-allow-origin', '*').header('vary', 'Origin');
  fastify.options(FEEDBACK_PATH, async (_request, reply) => {
    allowOrigin(reply)
      .header('access-control-allow-methods', 'POST')
      .header('access-control-allow-headers', 'authorization, content-type, x-api-key')
      .header('access-control-max-age', '86400')
      .status(204)
      .send();
  });
  // On the feedback route only, so no other answer of the API pays for it; route hooks also run for
  // answers of the error handler and the exception filter, so refusals carry the header too.
  const allowOnSend: onSendHookHandler = (_request, reply, payload, done) => {
    allowOrigin(reply);
    done(null, payload);
  };
  fastify.addHook('onRoute', (route) => {
    const methods = Array.isArray(route.method) ? route.method : [route.method];
    if (route.url !== FEEDBACK_PATH || !methods.includes('POST')) return;
    route.onSend = [...(route.onSend === undefined ? [] : Array.isArray(route.onSend) ? route.onSend : [route.onSend]), allowOnSend];
  });
}
