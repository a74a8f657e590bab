import { createHmac, timingSafeEqual } from 'node:crypto';
import type { FeedbackTokenClaims } from './feedback.model';

/**
 * Browser-safe feedback tokens: `sffb_<claims, base64url JSON>.<HMAC-SHA256, base64url>`. The key is
 * derived from the server's pepper, so any process can verify a token without PostgreSQL, and a
 * token grants nothing but feedback on one trace under one name until it expires.
 */
export const FEEDBACK_TOKEN_PREFIX = 'sffb_';

function key(pepper: string): Buffer {
  return createHmac('sha256', pepper).update('spanforge feedback tokens v1').digest();
}

export function signFeedbackToken(claims: FeedbackTokenClaims, pepper: string): string {
  const fields = [
    claims.tenantId,
    claims.projectId,
    claims.traceId,
    claims.name,
    claims.expiresAt,
    ...(claims.apiKeyId ? [claims.apiKeyId] : []),
  ];
  const payload = Buffer.from(JSON.stringify(fields)).toString('base64url');
  const signature = createHmac('sha256', key(pepper)).update(payload).digest('base64url');
  return `${FEEDBACK_TOKEN_PREFIX}${payload}.${signature}`;
}

/** The claims of a valid, unexpired token; undefined for anything else (tampered, expired, not a token). */
export function verifyFeedbackToken(
  token: string,
  pepper: string,
  nowSeconds = Math.floor(Date.now() / 1000),
): FeedbackTokenClaims | undefined {
  if (!token.startsWith(FEEDBACK_TOKEN_PREFIX)) return undefined;
  const [payload, signature] = token.slice(FEEDBACK_TOKEN_PREFIX.length).split('.');
  if (!payload || !signature) return undefined;
  const expected = createHmac('sha256', key(pepper)).update(payload).digest();
  const given = Buffer.from(signature, 'base64url');
  if (given.length !== expected.length || !timingSafeEqual(given, expected)) return undefined;
  try {
    const [tenantId, projectId, traceId, name, expiresAt, apiKeyId] = JSON.parse(Buffer.from(payload, 'base64url').toString('utf8')) as [
      string,
      string,
      string,
      string,
      number,
      string?,
    ];
    if (typeof expiresAt !== 'number' || expiresAt <= nowSeconds) return undefined;
    return { tenantId, projectId, traceId, name, expiresAt, ...(typeof apiKeyId === 'string' ? { apiKeyId } : {}) };
  } catch {
    return undefined;
  }
}

export function isFeedbackToken(bearer: string | undefined): bearer is string {
  return typeof bearer === 'string' && bearer.startsWith(FEEDBACK_TOKEN_PREFIX);
}
