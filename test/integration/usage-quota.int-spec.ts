import { status as GrpcStatus } from '@grpc/grpc-js';
import type { Counter } from 'prom-client';
import { RpcCode } from '@spanforge/otlp';
import { graphql } from '../support';
import { startIngestHarness, type IngestHarness } from './ingest-harness';
import {
  JSON_TYPE,
  PROTOBUF,
  ZERO_TRACE_ID,
  broken,
  grpcExport,
  jsonBody,
  postTraces,
  protobufBody,
  recordTrace,
  statusOf,
} from './raw-otlp';

/*
 * `usage` (per project and UTC bucket, from the ingest accounting) and tenant quotas
 * (`setTenantQuota`, enforced by the gateway), through the real gateway, worker and api. Every
 * expected figure is computed from what the test sent.
 */

interface UsageRow {
  time: string;
  projectId: string;
  spansAccepted: number;
  spansRejected: number;
  spansRefused: number;
  bytesAccepted: number;
}

type Figures = Omit<UsageRow, 'time' | 'projectId'>;

const USAGE = `query($from: DateTime!, $to: DateTime!, $g: Granularity, $t: ID) {
  usage(from: $from, to: $to, granularity: $g, tenantId: $t) { time projectId spansAccepted spansRejected spansRefused bytesAccepted }
}`;

const HOUR_MS = 3_600_000;
const startOfUtcDay = (ms: number) => new Date(Math.floor(ms / 86_400_000) * 86_400_000).toISOString();
const startOfUtcMonth = (ms: number) => new Date(Date.UTC(new Date(ms).getUTCFullYear(), new Date(ms).getUTCMonth(), 1)).toISOString();

/** A project key of an existing tenant (harness projects come with a tenant of their own). */
async function addProject(h: IngestHarness, tenantId: string, name: string): Promise<{ projectId: string; apiKey: string }> {
  const project = await h.services.tenancy.createProject(tenantId, name);
  const { secret } = await h.services.tenancy.createApiKey(project.id, 'test');
  return { projectId: project.id, apiKey: secret };
}

async function askUsage(h: IngestHarness, bearer: string, variables: Record<string, unknown>) {
  return graphql<{ usage: UsageRow[] }>(h.api, USAGE, variables, bearer);
}

/** The usage rows once they equal `expected` (accounting is written in batches: rows, then the gateway's refusals every 5 s). */
async function usageOnceEqual(h: IngestHarness, bearer: string, variables: Record<string, unknown>, expected: UsageRow[]) {
  let rows: UsageRow[] = [];
  for (let i = 0; i < 150; i++) {
    const answer = await askUsage(h, bearer, variables);
    expect(answer.errors).toBeUndefined();
    rows = answer.data!.usage;
    if (JSON.stringify(rows) === JSON.stringify(expected)) break;
    await new Promise((r) => setTimeout(r, 100));
  }
  return rows;
}

const row = (time: string, projectId: string, figures: Figures): UsageRow => ({ time, projectId, ...figures });
const byProject = (rows: UsageRow[]) => [...rows].sort((a, b) => a.projectId.localeCompare(b.projectId));

let h: IngestHarness;
beforeAll(async () => {
  h = await startIngestHarness();
});
afterAll(() => h?.stop());

describe('usage', () => {
  it('counts accepted, rejected and refused spans and accepted bytes per project, for a key and for the admin', async () => {
    const sentAt = Date.now();
    const a = await h.newProject();
    // A second project of the same tenant, with a rate that takes one export of 3 spans and refuses the next.
    const c = await addProject(h, a.tenantId, 'limited');
    await h.services.tenancy.setIngestLimits({ projectId: c.projectId, spansPerSecond: 2 });
    const other = await h.newProject();

    // Project a: one valid export (protobuf), one with an invalid span (JSON): 5 accepted, 1 rejected.
    const valid = protobufBody(recordTrace(3));
    const [first, ...rest] = recordTrace(3);
    const partial = jsonBody([broken(first!, { traceId: ZERO_TRACE_ID }), ...rest]);
    expect((await postTraces(h.http, valid, { type: PROTOBUF, key: a.apiKey })).status).toBe(200);
    expect((await postTraces(h.http, partial, { type: JSON_TYPE, key: a.apiKey })).status).toBe(200);
    // Project c: 3 spans taken, 3 refused over its rate (the 4-span burst holds one export of 3).
    const taken = protobufBody(recordTrace(3));
    expect((await postTraces(h.http, taken, { type: PROTOBUF, key: c.apiKey })).status).toBe(200);
    expect((await postTraces(h.http, protobufBody(recordTrace(3)), { type: PROTOBUF, key: c.apiKey })).status).toBe(429);
    // Another tenant's project: in neither of the answers below.
    expect((await postTraces(h.http, protobufBody(recordTrace(4)), { type: PROTOBUF, key: other.apiKey })).status).toBe(200);

    const day = startOfUtcDay(sentAt);
    const range = { from: new Date(sentAt - 24 * HOUR_MS).toISOString(), to: new Date(Date.now() + HOUR_MS).toISOString(), g: 'DAY' };
    const ofA = row(day, a.projectId, {
      spansAccepted: 5,
      spansRejected: 1,
      spansRefused: 0,
      bytesAccepted: valid.length + partial.length,
    });
    const ofC = row(day, c.projectId, { spansAccepted: 3, spansRejected: 0, spansRefused: 3, bytesAccepted: taken.length });

    // A READ key: its own project, by day.
    expect(await usageOnceEqual(h, a.apiKey, range, [ofA])).toEqual([ofA]);
    // The admin: every project of the tenant, the other tenant's left out.
    const admin = h.services.adminToken!;
    const tenantWide = await usageOnceEqual(h, admin, { ...range, t: a.tenantId }, byProject([ofA, ofC]));
    expect(tenantWide).toEqual(byProject([ofA, ofC]));
    // Without a granularity: the same figures in one bucket for the whole range, at its start.
    expect((await askUsage(h, admin, { ...range, g: null, t: a.tenantId })).data!.usage).toEqual(
      byProject([
        { ...ofA, time: range.from },
        { ...ofC, time: range.from },
      ]),
    );
    // A range that ends before the exports: nothing.
    expect((await askUsage(h, a.apiKey, { from: range.from, to: new Date(sentAt - HOUR_MS).toISOString() })).data!.usage).toEqual([]);
  });

  it('refuses the admin without a tenant, a key naming another tenant, and a reversed range', async () => {
    const a = await h.newProject();
    const other = await h.newProject();
    const range = { from: new Date(Date.now() - HOUR_MS).toISOString(), to: new Date().toISOString() };
    const code = async (bearer: string, variables: Record<string, unknown>) =>
      (await askUsage(h, bearer, variables)).errors?.[0]?.extensions?.code;
    expect(await code(h.services.adminToken!, range)).toBe('BAD_USER_INPUT');
    expect(await code(h.services.adminToken!, { ...range, t: '00000000-0000-4000-8000-000000000000' })).toBe('NOT_FOUND');
    expect(await code(a.apiKey, { ...range, t: other.tenantId })).toBe('FORBIDDEN');
    expect(await code(a.apiKey, { from: range.to, to: range.from })).toBe('BAD_USER_INPUT');
  });
});

const SET_QUOTA = `mutation($i: SetTenantQuotaInput!) { setTenantQuota(input: $i) { id monthlySpans projects { id } } }`;

/** Reads of quotas the gateway has finished, ok or not (its metric, on the all-in-one's registry). */
async function quotaReads(harness: IngestHarness): Promise<number> {
  const metric = harness.services.metrics.getSingleMetric('spanforge_gateway_quota_reads_total') as Counter | undefined;
  return ((await metric?.get())?.values ?? []).reduce((n, v) => n + v.value, 0);
}

/** Until the gateway has read quotas twice from now: once after any change made before the call. */
async function quotasRead(harness: IngestHarness): Promise<void> {
  const before = await quotaReads(harness);
  for (let i = 0; i < 300 && (await quotaReads(harness)) < before + 2; i++) await new Promise((r) => setTimeout(r, 100));
  expect(await quotaReads(harness)).toBeGreaterThanOrEqual(before + 2);
}

/** Spans and requests a project's exports were refused over its tenant's quota, once `spans` are accounted (the gateway ships refusals every 5 s). */
async function quotaRefusals(harness: IngestHarness, projectId: string, spans: number) {
  const read = async () => {
    const [row] = await harness.query<{ spans: string; requests: string; bytes: string }>(
      `SELECT sum(spans) AS spans, sum(requests) AS requests, sum(bytes) AS bytes FROM ingest_accounting FINAL
       WHERE project_id = {p:String} AND outcome = 'refused' AND reason = 'quota'`,
      { p: projectId },
    );
    return { spans: Number(row?.spans ?? 0), requests: Number(row?.requests ?? 0), bytes: Number(row?.bytes ?? 0) };
  };
  let refused = await read();
  for (let i = 0; i < 150 && refused.spans < spans; i++) {
    await new Promise((r) => setTimeout(r, 100));
    refused = await read();
  }
  return refused;
}

describe('tenant quota', () => {
  it('takes exports until one crosses the quota, whole; then refuses every project of the tenant with 429 and accounts it as quota', async () => {
    const admin = h.services.adminToken!;
    const a1 = await h.newProject();
    const a2 = await addProject(h, a1.tenantId, 'second');
    const other = await h.newProject();
    const quota = 10;
    const set = await graphql<{ setTenantQuota: { id: string; monthlySpans: number | null; projects: Array<{ id: string }> } }>(
      h.api,
      SET_QUOTA,
      { i: { tenantId: a1.tenantId, monthlySpans: quota } },
      admin,
    );
    expect(set.errors).toBeUndefined();
    expect(set.data!.setTenantQuota).toEqual({
      id: a1.tenantId,
      monthlySpans: quota,
      projects: [{ id: a1.projectId }, { id: a2.projectId }],
    });
    // The other tenant has a quota too, far from reached.
    expect((await graphql(h.api, SET_QUOTA, { i: { tenantId: other.tenantId, monthlySpans: 1_000 } }, admin)).errors).toBeUndefined();
    await quotasRead(h);
    const sentAt = Date.now();

    // 4 + 4 = 8 < 10: the third export (5 spans) is taken whole and brings the month to 13.
    const exports = [
      { key: a1.apiKey, body: protobufBody(recordTrace(4)) },
      { key: a2.apiKey, body: protobufBody(recordTrace(4)) },
      { key: a1.apiKey, body: protobufBody(recordTrace(5)) },
    ];
    for (const { key, body } of exports) expect((await postTraces(h.http, body, { type: PROTOBUF, key })).status).toBe(200);
    await h.waitForSpans(a1.projectId, 9);
    await h.waitForSpans(a2.projectId, 4);

    // Every project of the tenant is refused now, over HTTP (protobuf and JSON) and gRPC.
    const refusedA1 = protobufBody(recordTrace(3));
    const refusedA2 = jsonBody(recordTrace(2));
    const refusedGrpc = protobufBody(recordTrace(2));
    const answers = [
      await postTraces(h.http, refusedA1, { type: PROTOBUF, key: a1.apiKey }),
      await postTraces(h.http, refusedA2, { type: JSON_TYPE, key: a2.apiKey }),
    ];
    for (const answer of answers) {
      expect(answer.status).toBe(429);
      const retryAfter = Number(answer.retryAfter);
      expect(retryAfter).toBeGreaterThanOrEqual(1);
      expect(retryAfter).toBeLessThanOrEqual(30);
      expect(statusOf(answer)).toMatchObject({ code: RpcCode.RESOURCE_EXHAUSTED, retryDelaySeconds: retryAfter });
      expect(statusOf(answer).message).toMatch(/monthly quota of 10 accepted spans/);
    }
    const grpc = await grpcExport(h.grpc, refusedGrpc, a1.apiKey);
    expect(grpc.code).toBe(GrpcStatus.RESOURCE_EXHAUSTED);
    expect(grpc.status?.retryDelaySeconds).toBeGreaterThanOrEqual(1);

    // The other tenant is not held back.
    const otherBody = protobufBody(recordTrace(4));
    expect((await postTraces(h.http, otherBody, { type: PROTOBUF, key: other.apiKey })).status).toBe(200);
    await h.waitForSpans(other.projectId, 4);

    // Accounted as refused, reason quota, with their spans and bytes; nothing of them stored.
    expect(await quotaRefusals(h, a1.projectId, 3 + 2)).toEqual({ spans: 5, requests: 2, bytes: refusedA1.length + refusedGrpc.length });
    expect(await quotaRefusals(h, a2.projectId, 2)).toEqual({ spans: 2, requests: 1, bytes: refusedA2.length });
    expect(await h.waitForSpans(a1.projectId, 9)).toBe(9);

    // usage shows it: this calendar month (UTC), for the tenant.
    const month = startOfUtcMonth(sentAt);
    const nextMonth = new Date(Date.UTC(new Date(sentAt).getUTCFullYear(), new Date(sentAt).getUTCMonth() + 1, 1)).toISOString();
    const range = { from: month, to: nextMonth };
    const expected = byProject([
      row(month, a1.projectId, {
        spansAccepted: 9,
        spansRejected: 0,
        spansRefused: 5,
        bytesAccepted: exports[0]!.body.length + exports[2]!.body.length,
      }),
      row(month, a2.projectId, { spansAccepted: 4, spansRejected: 0, spansRefused: 2, bytesAccepted: exports[1]!.body.length }),
    ]);
    expect(await usageOnceEqual(h, admin, { ...range, t: a1.tenantId }, expected)).toEqual(expected);

    // Without the quota (null), the tenant's exports are taken again once the gateway has read it.
    const removed = await graphql<{ setTenantQuota: { monthlySpans: number | null } }>(
      h.api,
      SET_QUOTA,
      { i: { tenantId: a1.tenantId, monthlySpans: null } },
      admin,
    );
    expect(removed.data?.setTenantQuota.monthlySpans).toBeNull();
    await quotasRead(h);
    expect((await postTraces(h.http, protobufBody(recordTrace(2)), { type: PROTOBUF, key: a2.apiKey })).status).toBe(200);
  });

  it('is set by the admin only, to a whole number from 0 or null, for a tenant that exists', async () => {
    const a = await h.newProject();
    const code = async (bearer: string, input: Record<string, unknown>) =>
      (await graphql(h.api, SET_QUOTA, { i: input }, bearer)).errors?.[0]?.extensions?.code;
    const admin = h.services.adminToken!;
    expect(await code(admin, { tenantId: a.tenantId, monthlySpans: -1 })).toBe('BAD_USER_INPUT');
    expect(await code(admin, { tenantId: '00000000-0000-4000-8000-000000000000', monthlySpans: 5 })).toBe('NOT_FOUND');
    expect(await code(a.apiKey, { tenantId: a.tenantId, monthlySpans: 5 })).toBe('FORBIDDEN');
    const tenants = await graphql<{ tenants: Array<{ id: string; monthlySpans: number | null }> }>(
      h.api,
      '{ tenants { id monthlySpans } }',
      {},
      admin,
    );
    expect(tenants.data!.tenants.find((t) => t.id === a.tenantId)).toEqual({ id: a.tenantId, monthlySpans: null });
  });
});
