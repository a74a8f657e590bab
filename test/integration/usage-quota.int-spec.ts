import { graphql } from '../support';
import { startIngestHarness, type IngestHarness } from './ingest-harness';
import { JSON_TYPE, PROTOBUF, ZERO_TRACE_ID, broken, jsonBody, postTraces, protobufBody, recordTrace } from './raw-otlp';

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

const USAGE = `query($from: DateTime!, $to: DateTime!, $g: UsageGranularity, $t: ID) {
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

describe('usage', () => {
  let h: IngestHarness;
  beforeAll(async () => {
    h = await startIngestHarness();
  });
  afterAll(() => h?.stop());

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
    const range = { from: new Date(sentAt - 24 * HOUR_MS).toISOString(), to: new Date(Date.now() + HOUR_MS).toISOString() };
    const ofA = row(day, a.projectId, {
      spansAccepted: 5,
      spansRejected: 1,
      spansRefused: 0,
      bytesAccepted: valid.length + partial.length,
    });
    const ofC = row(day, c.projectId, { spansAccepted: 3, spansRejected: 0, spansRefused: 3, bytesAccepted: taken.length });

    // A READ key: its own project, by day (the default).
    expect(await usageOnceEqual(h, a.apiKey, range, [ofA])).toEqual([ofA]);
    // The admin: every project of the tenant, the other tenant's left out.
    const admin = h.services.adminToken!;
    const tenantWide = await usageOnceEqual(h, admin, { ...range, t: a.tenantId }, byProject([ofA, ofC]));
    expect(tenantWide).toEqual(byProject([ofA, ofC]));
    // By month: the same figures under the first of the month.
    const month = startOfUtcMonth(sentAt);
    expect((await askUsage(h, admin, { ...range, g: 'MONTH', t: a.tenantId })).data!.usage).toEqual(
      byProject([
        { ...ofA, time: month },
        { ...ofC, time: month },
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
