import { compilePolicy, validatePolicy } from '@spanforge/policy';
import type { ExportJob } from '@spanforge/queue';
import { exportRows, keptSinceNs } from './export-rows';

const DAY_MS = 86_400_000;
const RECEIVED_AT = Date.UTC(2026, 11, 1, 12);

/** A JSON export of spans starting at the given times (ms), as the gateway queues it. */
function job(startsMs: number[]): ExportJob {
  const spans = startsMs.map((start, i) => ({
    traceId: '0af7651916cd43dd8448eb211c80319c',
    spanId: `00f067aa0ba902b${i}`,
    name: `step ${i}`,
    kind: 1,
    startTimeUnixNano: String(BigInt(start) * 1_000_000n),
    endTimeUnixNano: String(BigInt(start + 10) * 1_000_000n),
  }));
  const body = Buffer.from(JSON.stringify({ resourceSpans: [{ resource: { attributes: [] }, scopeSpans: [{ spans }] }] }));
  return {
    v: 1,
    tenantId: 't',
    projectId: 'p',
    format: 'json',
    body: body.toString('base64'),
    receivedAt: RECEIVED_AT,
    exportId: 'e1',
    receivedSpans: spans.length,
    acceptedSpans: spans.length,
    bytes: body.length,
  };
}

const retention = (days: number) => compilePolicy(validatePolicy({ retentionDays: days }));
const outcomes = (rows: ReturnType<typeof exportRows>['accounting']) =>
  Object.fromEntries(rows.map((row) => [`${row.outcome}${row.reason ? `:${row.reason}` : ''}`, row.spans]));

describe('exportRows under a retention', () => {
  it('stores spans the retention keeps and rejects as expired those older when the export arrived', () => {
    const kept = RECEIVED_AT - 7 * DAY_MS + 1;
    const expired = RECEIVED_AT - 7 * DAY_MS - 1;
    const chunk = exportRows(job([kept, expired, RECEIVED_AT - 1_000]), [], retention(7));
    expect(chunk.rows).toBe(2);
    expect(outcomes(chunk.accounting)).toEqual({ received: 3, accepted: 2, 'rejected:expired': 1 });
  });

  it('decides by when the export arrived, so a retry much later decides alike', () => {
    expect(keptSinceNs({ receivedAt: RECEIVED_AT }, retention(7))).toBe(BigInt(RECEIVED_AT - 7 * DAY_MS) * 1_000_000n);
    expect(keptSinceNs({ receivedAt: RECEIVED_AT }, compilePolicy(validatePolicy({})))).toBeUndefined();
  });

  it('keeps every span without a retention', () => {
    const chunk = exportRows(job([RECEIVED_AT - 3_000 * DAY_MS]), [], compilePolicy(validatePolicy({})));
    expect(outcomes(chunk.accounting)).toEqual({ received: 1, accepted: 1 });
  });
});
