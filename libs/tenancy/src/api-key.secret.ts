import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';

/**
 * An API key secret: `sf_<lookupId>_<secret>`. The lookup id (12 hex chars) finds the row without
 * revealing anything; the secret is 32 random bytes (base64url, 43 chars). The recognisable
 * `sf_` prefix lets secret scanners find leaked keys.
 */
export const KEY_PREFIX = 'sf_';
const SECRET_PATTERN = /^sf_([0-9a-f]{12})_([A-Za-z0-9_-]{43})$/;

export interface ParsedSecret {
  lookupId: string;
  /** The whole secret, as sent. */
  secret: string;
}

export function generateSecret(): { secret: string; lookupId: string; displayPrefix: string } {
  const lookupId = randomBytes(6).toString('hex');
  const secret = `${KEY_PREFIX}${lookupId}_${randomBytes(32).toString('base64url')}`;
  return { secret, lookupId, displayPrefix: displayPrefix(lookupId) };
}

export function displayPrefix(lookupId: string): string {
  return `${KEY_PREFIX}${lookupId}`;
}

export function parseSecret(secret: string): ParsedSecret | undefined {
  const match = SECRET_PATTERN.exec(secret);
  return match ? { lookupId: match[1]!, secret } : undefined;
}

/** HMAC-SHA256 keyed by the server's pepper over the per-key salt and the secret. */
export function hashSecret(secret: string, salt: Buffer, pepper: string): Buffer {
  return createHmac('sha256', pepper).update(salt).update(secret).digest();
}

export function newSalt(): Buffer {
  return randomBytes(16);
}

export function secretMatches(secret: string, salt: Buffer, expectedHash: Buffer, pepper: string): boolean {
  const actual = hashSecret(secret, salt, pepper);
  return actual.length === expectedHash.length && timingSafeEqual(actual, expectedHash);
}

/** Constant-time comparison of two tokens of any length (the admin token). */
export function tokensEqual(given: string, expected: string): boolean {
  const a = createHmac('sha256', 'token-compare').update(given).digest();
  const b = createHmac('sha256', 'token-compare').update(expected).digest();
  return timingSafeEqual(a, b);
}

/**
 * The secret a request carries: `Authorization: Bearer <secret>`, `x-api-key: <secret>`, or HTTP
 * Basic with the secret as the password (`Basic base64(<anything>:<secret>)`: what the Langfuse
 * SDKs send, their public key as user name), in HTTP headers and gRPC metadata alike.
 */
export function credentialFrom(authorization: unknown, apiKey: unknown): string | undefined {
  if (typeof authorization === 'string') {
    const match = /^Bearer\s+(\S+)\s*$/i.exec(authorization);
    if (match) return match[1];
    const basic = /^Basic\s+([A-Za-z0-9+/=]+)\s*$/i.exec(authorization);
    if (basic) {
      const decoded = Buffer.from(basic[1]!, 'base64').toString('utf8');
      const colon = decoded.indexOf(':');
      const password = colon === -1 ? '' : decoded.slice(colon + 1);
      if (password) return password;
    }
  }
  return typeof apiKey === 'string' && apiKey.trim() ? apiKey.trim() : undefined;
}
