import { lookup } from 'node:dns/promises';
import { PRIVATE_TARGETS_REFUSED, ipIsPrivate, signWebhook, webhookUrlProblem } from '@spanforge/reports';

/** Refuses webhook URLs that are not http(s) or that point, literally or through DNS, at private addresses (SSRF). */
export async function checkWebhookUrl(url: string, allowPrivate: boolean): Promise<string | undefined> {
  const problem = webhookUrlProblem(url, allowPrivate);
  if (problem || allowPrivate) return problem;
  const host = new URL(url).hostname.replace(/^\[|\]$/g, '');
  try {
    const addresses = await lookup(host, { all: true });
    if (addresses.some((a) => ipIsPrivate(a.address))) return `webhookUrl resolves to a private address (${host}); ${PRIVATE_TARGETS_REFUSED}`;
  } catch {
    return `webhookUrl host ${host} does not resolve`;
  }
  return undefined;
}

export interface DeliveryResult {
  ok: boolean;
  error?: string;
}

/**
 * POSTs a report as JSON with `Spanforge-Signature: t=<unix seconds>,v1=<HMAC-SHA256(secret, "t.body")>`
 * (and the timestamp and report id as their own headers), so a receiver can check origin and
 * freshness and drop a retried delivery it already has. 2xx is success; 10 s at most.
 */
export async function deliverWebhook(url: string, secret: string, reportId: string, body: string, allowPrivate: boolean): Promise<DeliveryResult> {
  const problem = await checkWebhookUrl(url, allowPrivate);
  if (problem) return { ok: false, error: problem };
  const timestamp = Math.floor(Date.now() / 1000);
  try {
    const response = await fetch(url, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        'user-agent': 'spanforge-cost-reports/1',
        'spanforge-signature': signWebhook(body, secret, timestamp),
        'spanforge-timestamp': String(timestamp),
        'spanforge-report-id': reportId,
      },
      body,
      redirect: 'manual',
      signal: AbortSignal.timeout(10_000),
    });
    await response.arrayBuffer().catch(() => undefined);
    return response.ok ? { ok: true } : { ok: false, error: `webhook answered ${response.status}` };
  } catch (error) {
    return { ok: false, error: `webhook unreachable: ${describeFetchFailure(error)}` };
  }
}

/** fetch() says only "fetch failed"; the reason (ECONNREFUSED, a timeout, a TLS error) is in its cause. */
export function describeFetchFailure(error: unknown): string {
  const { message, name, cause } = (error ?? {}) as { message?: string; name?: string; cause?: { code?: string; message?: string } };
  if (name === 'TimeoutError') return 'no answer within 10 s';
  const reason = cause?.code ?? cause?.message;
  return reason && reason !== message ? `${message ?? 'fetch failed'} (${reason})` : (message ?? String(error));
}
