import Fastify, { type FastifyInstance, type FastifyReply, type FastifyRequest } from 'fastify';
import type { Readable } from 'node:stream';
import { RpcCode, encodeExportResponse, encodeStatus, type OtlpSignal, type StatusDetail } from '@spanforge/otlp';
import type { GatewayServices } from './gateway.services';
import { admitExport } from './ingest/export-admission';
import { serveLangfuseScores } from './langfuse-scores';
import { BadEncodingError, BodyTooLargeError, readBody } from './ingest/body.reader';
import type { IngestDecision, IngestService, OtlpFormat } from './ingest/ingest.service';
import type { GatewayMetrics } from './ingest/gateway.metrics';

export interface OtlpHttpServer {
  app: FastifyInstance;
  url: string;
  port: number;
}

const CONTENT_TYPES: Record<string, OtlpFormat> = {
  'application/x-protobuf': 'protobuf',
  'application/protobuf': 'protobuf',
  'application/json': 'json',
};

function formatOf(request: FastifyRequest): OtlpFormat | undefined {
  const type = (request.headers['content-type'] ?? '').split(';')[0]!.trim().toLowerCase();
  return CONTENT_TYPES[type];
}

/** Where the Langfuse SDKs (Python 3+, JS 4+) post their OTLP traces. */
export const LANGFUSE_TRACES_PATH = '/api/public/otel/v1/traces';

/**
 * OTLP/HTTP on OTLP_HTTP_PORT (the OTLP/HTTP specification; answers in docs/api.md): POST /v1/traces, /v1/logs and
 * /v1/metrics in protobuf or JSON, gzip allowed,
 * every answer in the request's own content type. Key and content type are checked before the
 * body is read; the body is inflated as a stream under OTLP_MAX_BODY_BYTES.
 */
export async function startOtlpHttpServer(infra: GatewayServices, ingest: IngestService, metrics: GatewayMetrics): Promise<OtlpHttpServer> {
  const app = Fastify({ logger: false });
  // The body stays a stream: the route reads it itself, after the cheap checks.
  app.removeAllContentTypeParsers();
  app.addContentTypeParser('*', (_request, payload, done) => done(null, payload));

  app.get('/healthz', async () => ({ status: 'ok' }));
  app.get('/readyz', async (_request, reply) => {
    const report = await infra.readiness.run();
    return reply.status(report.ready ? 200 : 503).send(report);
  });

  // The Langfuse SDKs export to this path (with Basic auth, whose password is our key): a drop-in target for them.
  app.post(LANGFUSE_TRACES_PATH, (request, reply) => exportSignal(request, reply, 'traces'));
  app.post('/v1/traces', (request, reply) => exportSignal(request, reply, 'traces'));
  // Logs: GenAI events become their spans' contents; metrics are counted, not stored (docs/ingest.md).
  app.post('/v1/logs', (request, reply) => exportSignal(request, reply, 'logs'));
  app.post('/v1/metrics', (request, reply) => exportSignal(request, reply, 'metrics'));
  serveLangfuseScores(app, infra);

  async function exportSignal(request: FastifyRequest, reply: FastifyReply, signal: OtlpSignal) {
    const format = formatOf(request);
    const answer = (status: number, format: OtlpFormat, payload: Uint8Array | string) => {
      metrics.requests.inc({ transport: 'http', status: String(status) });
      return reply
        .status(status)
        .header('content-type', format === 'protobuf' ? 'application/x-protobuf' : 'application/json')
        .send(typeof payload === 'string' ? payload : Buffer.from(payload.buffer, payload.byteOffset, payload.byteLength));
    };
    const fail = (status: number, code: number, message: string, details: StatusDetail[] = [], as: OtlpFormat = format ?? 'json') =>
      answer(status, as, encodeStatus(as, code, message, details));

    if (!format) {
      return fail(
        415,
        RpcCode.INVALID_ARGUMENT,
        `unsupported Content-Type "${request.headers['content-type'] ?? ''}": send application/x-protobuf or application/json`,
        [],
        'json',
      );
    }
    const admission = admitExport(await infra.authenticator.fromHeaders(request.headers));
    if (!admission.admitted) return fail(admission.httpStatus, admission.rpcCode, admission.message);
    const scope = admission.project;

    let body: Buffer;
    try {
      body = await readBody(
        request.body as Readable,
        request.headers['content-encoding'] as string | undefined,
        infra.config.otlpMaxBodyBytes,
      );
    } catch (error) {
      if (error instanceof BodyTooLargeError) {
        reply.header('connection', 'close');
        return fail(413, RpcCode.INVALID_ARGUMENT, error.message);
      }
      if (error instanceof BadEncodingError) return fail(400, RpcCode.INVALID_ARGUMENT, error.message);
      throw error;
    }
    const decision = await ingest.take(signal, scope, format, body);
    return respond(decision, format, signal, reply, answer, fail);
  }

  await app.listen({ port: infra.config.ports.otlpHttp, host: infra.config.host });
  infra.shutdown.add('stop-accepting', 'OTLP/HTTP server', () => app.close());
  const address = app.server.address();
  const port = typeof address === 'object' && address ? address.port : infra.config.ports.otlpHttp;
  return { app, url: `http://localhost:${port}`, port };
}

function respond(
  decision: IngestDecision,
  format: OtlpFormat,
  signal: OtlpSignal,
  reply: FastifyReply,
  answer: (status: number, format: OtlpFormat, payload: Uint8Array | string) => FastifyReply,
  fail: (status: number, code: number, message: string, details?: StatusDetail[]) => FastifyReply,
): FastifyReply {
  switch (decision.outcome) {
    case 'accepted':
      return answer(200, format, encodeExportResponse(format, decision.rejected, decision.message, signal));
    case 'invalid':
      return fail(400, RpcCode.INVALID_ARGUMENT, decision.message);
    case 'rate_limited':
      reply.header('retry-after', String(decision.retryAfterSeconds));
      return fail(429, RpcCode.RESOURCE_EXHAUSTED, decision.message, [
        { type: 'retry_info', retryDelayMs: decision.retryAfterSeconds * 1000 },
      ]);
    case 'unavailable':
      reply.header('retry-after', String(decision.retryAfterSeconds));
      return fail(503, RpcCode.UNAVAILABLE, decision.message, [{ type: 'retry_info', retryDelayMs: decision.retryAfterSeconds * 1000 }]);
  }
}
