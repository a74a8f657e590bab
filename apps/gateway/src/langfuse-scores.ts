import type { FastifyInstance } from 'fastify';
import type { Readable } from 'node:stream';
import { DomainError, HTTP_STATUS, badInput } from '@spanforge/errors';
import type { FeedbackInput } from '@spanforge/feedback';
import type { GatewayServices } from './gateway.services';
import { ApiKeyScope, projectWithScope } from '@spanforge/tenancy';
import { BadEncodingError, BodyTooLargeError, readBody } from './ingest/body.reader';

/** Where the Langfuse SDKs post scores (`create_score` / `score`), on the host they export traces to. */
export const LANGFUSE_SCORES_PATH = '/api/public/scores';

/** A score with its comment fits well within this (feedback caps a comment at 4,000 characters). */
const MAX_SCORE_BYTES = 64 * 1024;

/** The Langfuse score body, as its SDKs send it (fields we do not keep are ignored). */
interface LangfuseScore {
  id?: string;
  traceId?: string;
  observationId?: string | null;
  name?: string;
  value?: number | string | boolean;
  comment?: string | null;
}

/**
 * Langfuse scores become feedback (docs/api.md, feedback): the trace and its observation are our
 * trace and span ids (Langfuse SDKs 3+ use OTel ids), the name and value as sent, `source`
 * "langfuse". Needs a key with INGEST, as feedback does; answers 200 `{ id }` as Langfuse does.
 */
export function serveLangfuseScores(app: FastifyInstance, infra: GatewayServices): void {
  app.post(LANGFUSE_SCORES_PATH, async (request, reply) => {
    try {
      const caller = await infra.authenticator.fromHeaders(request.headers);
      const project = projectWithScope(caller, ApiKeyScope.INGEST);
      let score: LangfuseScore;
      try {
        const text = (
          await readBody(request.body as Readable, request.headers['content-encoding'] as string | undefined, MAX_SCORE_BYTES)
        ).toString('utf8');
        score = JSON.parse(text) as LangfuseScore;
      } catch (error) {
        if (error instanceof BodyTooLargeError || error instanceof BadEncodingError || error instanceof SyntaxError)
          throw badInput(`the score is not a JSON object of at most ${MAX_SCORE_BYTES} bytes: ${error.message}`);
        throw error;
      }
      if (score === null || typeof score !== 'object' || Array.isArray(score)) throw badInput('the score must be a JSON object');
      const input: FeedbackInput = {
        traceId: score.traceId ?? '',
        ...(score.observationId ? { spanId: score.observationId } : {}),
        name: score.name ?? '',
        value: score.value as FeedbackInput['value'],
        ...(score.comment ? { comment: score.comment } : {}),
        source: 'langfuse',
        ...(score.id ? { id: score.id } : {}),
      };
      const record = await infra.feedback.submit(project, input);
      return reply.status(200).send({ id: record.id });
    } catch (error) {
      if (!(error instanceof DomainError)) throw error;
      return reply.status(HTTP_STATUS[error.code]).send({ error: { code: error.code, message: error.message } });
    }
  });
}
