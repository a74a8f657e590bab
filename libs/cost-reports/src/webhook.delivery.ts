import { lookup as dnsLookup } from 'node:dns/promises';
import http from 'node:http';
import https from 'node:https';
import { isIP, type LookupFunction } from 'node:net';
import { PRIVATE_TARGETS_REFUSED, ipIsPrivate, signWebhook, webhookUrlProblem } from '@spanforge/reports';

/** One address a host name resolves to (the shape of `dns.lookup(host, { all: true })`). */
export interface ResolvedAddress {
  address: string;
  family: number;
}

/** Turns a host name into its addresses; the system resolver unless a test gives another. */
export type Resolver = (host: string) => Promise<ResolvedAddress[]>;

export const systemResolver: Resolver = (host) => dnsLookup(host, { all: true, verbatim: true });

/**
 * A webhook URL that passed the SSRF guard, with the addresses that were checked: the delivery
 * connects to those and resolves nothing again, so a DNS answer that changes between the check and
 * the connection (DNS rebinding) cannot point it somewhere private. `addresses` is undefined when
 * there is nothing to pin: the host is an IP literal (checked as such), or private targets are allowed.
 */
export type WebhookTarget = { url: URL; addresses: ResolvedAddress[] | undefined; problem?: undefined } | { problem: string };

/** Refuses webhook URLs that are not http(s) or that point, literally or through DNS, at private addresses (SSRF). */
export async function resolveWebhookTarget(url: string, allowPrivate: boolean, resolve: Resolver = systemResolver): Promise<WebhookTarget> {
  const problem = webhookUrlProblem(url, allowPrivate);
  if (problem) return { problem };
  const parsed = new URL(url);
  const host = parsed.hostname.replace(/^\[|\]$/g, '');
  if (allowPrivate || isIP(host) !== 0) return { url: parsed, addresses: undefined };
  let addresses: ResolvedAddress[];
  try {
    addresses = await resolve(host);
  } catch (error) {
    // Not a failure of ours: the answer for the user is that the name does not resolve, and why.
    return { problem: `webhookUrl host ${host} does not resolve (${failureReason(error)})` };
  }
  if (addresses.length === 0) return { problem: `webhookUrl host ${host} does not resolve (no addresses)` };
  // Every address, not only the first: the connection may use any of them. The address itself is
  // not named: the message would tell a user how internal names resolve.
  if (addresses.some((a) => ipIsPrivate(a.address)))
    return { problem: `webhookUrl resolves to a private address (${host}); ${PRIVATE_TARGETS_REFUSED}` };
  return { url: parsed, addresses };
}

/** The SSRF guard's verdict alone: a problem phrased for the user, or undefined. */
export async function checkWebhookUrl(url: string, allowPrivate: boolean, resolve: Resolver = systemResolver): Promise<string | undefined> {
  return (await resolveWebhookTarget(url, allowPrivate, resolve)).problem;
}

export interface DeliveryResult {
  ok: boolean;
  error?: string;
}

export interface DeliveryOptions {
  /** Host name resolution for the SSRF check (tests); the connection uses what it answered. */
  resolve?: Resolver;
  /** The whole delivery (resolving, connecting, sending, the answer) is cut after this; 10 s. */
  timeoutMs?: number;
  /** The most of the receiver's answer that is read (for an error message); 4 KiB. */
  maxResponseBytes?: number;
}

export const WEBHOOK_TIMEOUT_MS = 10_000;
export const WEBHOOK_MAX_RESPONSE_BYTES = 4_096;
/** How much of a failing receiver's answer goes into the recorded error. */
const ERROR_EXCERPT_CHARS = 200;

/**
 * POSTs a report as JSON with `Spanforge-Signature: t=<unix seconds>,v1=<HMAC-SHA256(secret, "t.body")>`
 * (and the timestamp and report id as their own headers), so a receiver can check origin and
 * freshness and drop a retried delivery it already has. 2xx is success; redirects are not followed.
 *
 * A receiver cannot stall or exhaust the worker: the whole delivery has 10 s, the answer is asked
 * for uncompressed and never inflated, and at most 4 KiB of it is read before the connection is cut.
 */
export async function deliverWebhook(
  url: string,
  secret: string,
  reportId: string,
  body: string,
  allowPrivate: boolean,
  options: DeliveryOptions = {},
): Promise<DeliveryResult> {
  const timeoutMs = options.timeoutMs ?? WEBHOOK_TIMEOUT_MS;
  const signal = AbortSignal.timeout(timeoutMs);
  try {
    const target = await untilAborted(resolveWebhookTarget(url, allowPrivate, options.resolve), signal);
    if (target.problem !== undefined) return { ok: false, error: target.problem };
    const timestamp = Math.floor(Date.now() / 1000);
    const answer = await postWebhook(target.url, {
      addresses: target.addresses,
      headers: {
        'content-type': 'application/json',
        'user-agent': 'spanforge-cost-reports/1',
        'spanforge-signature': signWebhook(body, secret, timestamp),
        'spanforge-timestamp': String(timestamp),
        'spanforge-report-id': reportId,
      },
      body,
      signal,
      maxResponseBytes: options.maxResponseBytes ?? WEBHOOK_MAX_RESPONSE_BYTES,
    });
    if (answer.status >= 200 && answer.status < 300) return { ok: true };
    const excerpt = answerExcerpt(answer);
    return { ok: false, error: `webhook answered ${answer.status}${excerpt ? `: ${excerpt}` : ''}` };
  } catch (error) {
    if (signal.aborted) return { ok: false, error: `webhook unreachable: no answer within ${formatSeconds(timeoutMs)}` };
    return { ok: false, error: `webhook unreachable: ${describeFetchFailure(error)}` };
  }
}

export interface WebhookAnswer {
  status: number;
  headers: http.IncomingHttpHeaders;
  /** The start of the body, at most maxResponseBytes, exactly as sent (never inflated). */
  body: Buffer;
  /** The body went on past what was read; the connection was cut there. */
  truncated: boolean;
}

export interface PostOptions {
  /** Connect only to these (checked) addresses, for the URL's host name; undefined: resolve as usual. */
  addresses?: ResolvedAddress[];
  headers: Record<string, string>;
  body: string;
  signal: AbortSignal;
  maxResponseBytes: number;
}

/**
 * One POST over node:http(s), on a connection of its own (no pooling: it is closed after the
 * answer). The Host header and the TLS server name (SNI, and the name the certificate must carry)
 * stay the URL's host name; only the address connected to comes from `addresses`.
 */
export function postWebhook(url: URL, options: PostOptions): Promise<WebhookAnswer> {
  const { addresses, signal, maxResponseBytes } = options;
  return new Promise<WebhookAnswer>((resolve, reject) => {
    /** Set once the status line is in: from then on the answer is known and a failure only cuts its body short. */
    let finish: ((truncated: boolean) => void) | undefined;
    const transport = url.protocol === 'https:' ? https : http;
    const request = transport.request(
      url,
      {
        method: 'POST',
        headers: {
          ...options.headers,
          'content-length': String(Buffer.byteLength(options.body)),
          // Compressed answers are never inflated (a small gzip body can inflate to gigabytes): ask for none.
          'accept-encoding': 'identity',
          connection: 'close',
        },
        agent: false,
        lookup: addresses ? pinnedLookup(url.hostname, addresses) : undefined,
        signal,
      },
      (response) => {
        const chunks: Buffer[] = [];
        let read = 0;
        let settled = false;
        finish = (truncated: boolean) => {
          if (settled) return;
          settled = true;
          resolve({ status: response.statusCode ?? 0, headers: response.headers, body: Buffer.concat(chunks, read), truncated });
          // Whatever else the receiver sends is not read: the connection is closed.
          response.destroy();
          request.destroy();
        };
        const status = response.statusCode ?? 0;
        // A success needs nothing of the body; only a failure's body is read, for its message.
        if (status >= 200 && status < 300) {
          finish(!response.complete);
          return;
        }
        const done = finish;
        response.on('data', (chunk: Buffer) => {
          const room = maxResponseBytes - read;
          const taken = chunk.length > room ? chunk.subarray(0, room) : chunk;
          chunks.push(taken);
          read += taken.length;
          if (read >= maxResponseBytes) done(chunk.length > room || !response.complete);
        });
        response.on('end', () => done(false));
        // The status is known by now: a body cut off by the time limit or a reset is still the answer,
        // what arrived of it only serves the error message. Handled here, not rejected.
        response.on('error', () => done(true));
        response.on('close', () => done(!response.complete));
      },
    );
    // Before the status line a failure is the delivery's (refused, reset, timed out); after it, see above.
    request.on('error', (error) => (finish ? finish(true) : reject(error)));
    request.end(options.body);
  });
}

/**
 * A `lookup` for net/tls.connect that answers the already checked addresses for the URL's host and
 * nothing else (connect only ever asks for that host). Handles both forms Node asks for: one address,
 * or all of them (`all: true`, when it tries IPv6 and IPv4 in turn).
 */
export function pinnedLookup(hostname: string, addresses: ResolvedAddress[]): LookupFunction {
  const expected = hostname.replace(/^\[|\]$/g, '').toLowerCase();
  return (host, options, callback) => {
    const wanted = familyNumber(options.family);
    const usable = addresses.filter((a) => wanted === 0 || a.family === wanted);
    if (host.toLowerCase() !== expected || usable.length === 0) {
      const error: NodeJS.ErrnoException = new Error(`no checked address for ${host}${wanted ? ` (IPv${wanted})` : ''}`);
      error.code = 'ENOTFOUND';
      callback(error, '', 0);
      return;
    }
    if (options.all)
      callback(
        null,
        usable.map((a) => ({ address: a.address, family: a.family })),
      );
    else callback(null, usable[0]!.address, usable[0]!.family);
  };
}

function familyNumber(family: unknown): number {
  if (family === 4 || family === 'IPv4') return 4;
  if (family === 6 || family === 'IPv6') return 6;
  return 0;
}

/** The start of a failing receiver's answer, as one line of plain text, when it is text at all. */
function answerExcerpt(answer: WebhookAnswer): string {
  const encoding = String(answer.headers['content-encoding'] ?? 'identity')
    .trim()
    .toLowerCase();
  if (encoding !== 'identity' && encoding !== '') return `(a ${encoding}-encoded answer, not shown)`;
  // No control characters (PostgreSQL text refuses NUL) and no line breaks in a log line.
  const text = answer.body
    .toString('utf8')
    .replace(/[\u0000-\u001f\u007f-\u009f]+/g, ' ')
    .replace(/\s+/g, ' ')
    .trim();
  if (text === '') return '';
  return text.length > ERROR_EXCERPT_CHARS || answer.truncated ? `${text.slice(0, ERROR_EXCERPT_CHARS)}…` : text;
}

/** The promise, or a rejection as soon as the signal aborts (a DNS lookup cannot be cancelled, only no longer waited for). */
function untilAborted<T>(promise: Promise<T>, signal: AbortSignal): Promise<T> {
  if (signal.aborted) return Promise.reject(signal.reason);
  return new Promise<T>((resolve, reject) => {
    const onAbort = () => reject(signal.reason);
    signal.addEventListener('abort', onAbort, { once: true });
    promise.then(
      (value) => {
        signal.removeEventListener('abort', onAbort);
        resolve(value);
      },
      (error: unknown) => {
        signal.removeEventListener('abort', onAbort);
        reject(error);
      },
    );
  });
}

function formatSeconds(ms: number): string {
  return ms % 1000 === 0 ? `${ms / 1000} s` : `${(ms / 1000).toFixed(1)} s`;
}

/** Why a name did not resolve (ENOTFOUND, ESERVFAIL, a timeout), in a few words. */
function failureReason(error: unknown): string {
  const code = (error as { code?: unknown } | null)?.code;
  if (typeof code === 'string' && code !== '') return code;
  return error instanceof Error ? error.message : String(error);
}

/**
 * The reason of a failed request in a few words. fetch() says only "fetch failed" and puts the reason
 * (ECONNREFUSED, a timeout, a TLS error) in its cause; node:http's errors carry it in their message and
 * `code`, except an AggregateError (IPv6 and IPv4 both tried), whose message may be empty.
 */
export function describeFetchFailure(error: unknown): string {
  const { message, name, cause, code } = (error ?? {}) as {
    message?: string;
    name?: string;
    code?: unknown;
    cause?: { code?: string; message?: string };
  };
  if (name === 'TimeoutError') return 'no answer within 10 s';
  if (error instanceof AggregateError && !message) {
    const inner = [...new Set(error.errors.map((e: unknown) => describeFetchFailure(e)))];
    return inner.length > 0 ? inner.join('; ') : typeof code === 'string' ? code : 'connection failed';
  }
  const text = message || (typeof code === 'string' ? code : undefined);
  const reason = cause?.code ?? cause?.message;
  return reason && reason !== text ? `${text ?? 'fetch failed'} (${reason})` : (text ?? String(error));
}
