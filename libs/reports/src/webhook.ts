import { createHmac, timingSafeEqual } from 'node:crypto';
import { ipIsPrivate, parseIp } from './ip-address';

/**
 * Webhook delivery: signing (Stripe's scheme) and the SSRF guard on target URLs.
 *
 * A delivery is a POST of the report JSON with two headers:
 *
 *   Spanforge-Timestamp: 1717200000
 *   Spanforge-Signature: t=1717200000,v1=<hex HMAC-SHA256(secret, "1717200000." + raw body)>
 *
 * The timestamp is inside the signed text, so a captured delivery cannot be replayed outside the
 * tolerance. Spanforge-Timestamp repeats `t` for receivers that log it; the signature header's `t`
 * is what is verified. Receivers must sign the raw body bytes, not re-serialised JSON. Several
 * `v1=` entries may appear (one per active secret while a secret is rotated); any one matching is
 * enough.
 */

export const WEBHOOK_SIGNATURE_HEADER = 'Spanforge-Signature';
export const WEBHOOK_TIMESTAMP_HEADER = 'Spanforge-Timestamp';
/** Five minutes either way, Stripe's default: covers clock skew and retries of one attempt, not replays days later. */
export const DEFAULT_WEBHOOK_TOLERANCE_SECONDS = 300;

const MAX_WEBHOOK_URL_LENGTH = 2048;

function signature(body: string, secret: string, timestampSeconds: number): Buffer {
  return createHmac('sha256', secret).update(`${timestampSeconds}.${body}`, 'utf8').digest();
}

/** The Spanforge-Signature header value for a body sent at `timestampSeconds` (Unix seconds). */
export function signWebhook(body: string, secret: string, timestampSeconds: number): string {
  if (!Number.isSafeInteger(timestampSeconds) || timestampSeconds < 0)
    throw new RangeError(`timestamp must be whole Unix seconds, got ${timestampSeconds}`);
  return `t=${timestampSeconds},v1=${signature(body, secret, timestampSeconds).toString('hex')}`;
}

/**
 * For receivers (and tests): true when `header` carries a v1 signature of `body` under `secret`
 * and its timestamp is within `toleranceSeconds` of `nowSeconds`, either side. The comparison is
 * constant-time in the signature bytes; a malformed header is simply false.
 */
export function verifyWebhookSignature(
  body: string,
  header: string,
  secret: string,
  toleranceSeconds: number,
  nowSeconds: number,
): boolean {
  let timestamp: number | undefined;
  const candidates: Buffer[] = [];
  for (const part of header.split(',')) {
    const [key, value, ...extra] = part.trim().split('=');
    if (extra.length > 0 || value === undefined) continue;
    if (key === 't' && /^\d{1,15}$/.test(value)) timestamp = Number(value);
    if (key === 'v1' && /^[0-9a-f]{64}$/i.test(value)) candidates.push(Buffer.from(value, 'hex'));
  }
  if (timestamp === undefined || candidates.length === 0) return false;
  if (Math.abs(nowSeconds - timestamp) > toleranceSeconds) return false;
  const expected = signature(body, secret, timestamp);
  // Compare against every candidate, no early exit, so timing says nothing about which one matched.
  return candidates.reduce((matched, candidate) => timingSafeEqual(candidate, expected) || matched, false);
}

/** Why a private webhook target is refused, and how to allow it (the DNS check in cost-reports says the same). */
export const PRIVATE_TARGETS_REFUSED =
  'private webhook targets are not allowed on this server (ALLOW_PRIVATE_WEBHOOKS=true allows them, for development)';

/**
 * A problem with a webhook URL, phrased for the user, or undefined. Checks what can be checked
 * without DNS: http(s) only, no credentials, and unless `allowPrivate` no localhost names and no
 * IP literal that `ipIsPrivate` refuses. Host names are checked by the caller after resolving them,
 * on every address returned, and again at delivery time, where the connection then goes to the
 * addresses just checked and nowhere else (DNS can change between a check and a connection).
 *
 * The URL is read by the WHATWG parser, the one Node's fetch uses, so `http://2130706433/`,
 * `http://0x7f.1/` and `http://[::ffff:127.0.0.1]/` are judged as the 127.0.0.1 they connect to.
 * Deliver to `new URL(url).href`, not to the raw string.
 */
export function webhookUrlProblem(url: string, allowPrivate: boolean): string | undefined {
  if (typeof url !== 'string' || url.trim() === '') return 'webhook URL is empty';
  if (url.length > MAX_WEBHOOK_URL_LENGTH) return `webhook URL is longer than ${MAX_WEBHOOK_URL_LENGTH} characters`;
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    // Not a failure: the parser's TypeError only says "Invalid URL", and this message is the answer.
    return `webhook URL "${url}" is not a valid absolute URL`;
  }
  if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:')
    return `webhook URL must use http or https, not ${parsed.protocol.replace(/:$/, '')}`;
  if (parsed.username !== '' || parsed.password !== '')
    return 'webhook URL must not contain a user name or password; deliveries are authenticated by their signature';
  if (allowPrivate) return undefined;
  // A trailing dot is the same DNS name ("localhost." is localhost).
  const host = parsed.hostname.replace(/\.+$/, '');
  if (host === 'localhost' || host.endsWith('.localhost'))
    return `webhook URL points at localhost (${parsed.hostname}); ${PRIVATE_TARGETS_REFUSED}`;
  if (parseIp(host) && ipIsPrivate(host)) {
    return `webhook URL points at ${parsed.hostname}, a loopback, private, link-local or reserved address; ${PRIVATE_TARGETS_REFUSED}`;
  }
  return undefined;
}
