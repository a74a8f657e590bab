import { placeholders, recordingClient } from '@spanforge/testing/sql';
import { TenantUsageRepository } from './tenant-usage.repository';

/**
 * The statement behind tenant quotas, as ClickHouse receives it, kept in __snapshots__. It reads
 * across a tenant's projects by design (a quota is per tenant), so it is checked for its tenant
 * bound instead of a project scope.
 */
describe('TenantUsageRepository SQL', () => {
  const { client, record } = recordingClient(() => [{ tenant_id: 'tenant-1', spans: 42 }]);
  const repository = new TenantUsageRepository(client);
  const monthStart = Date.UTC(2026, 11, 1);

  it.each([
    ['since an instant', undefined],
    ['between two instants', Date.UTC(2026, 11, 1, 20)],
  ])('accepted spans per tenant %s', async (_name, toMs) => {
    let answer = new Map<string, number>();
    const statements = await record(async () => {
      answer = await repository.acceptedSpans(['tenant-1', 'tenant-2'], monthStart, toMs);
    });
    expect(answer).toEqual(new Map([['tenant-1', 42]]));
    expect(statements).toHaveLength(1);
    const [statement] = statements;
    expect(statement!.sql).toContain('tenant_id IN {tenantIds:Array(String)}');
    expect(statement!.logComment).toBe('gateway.tenant_accepted_spans');
    expect(placeholders(statement!.sql!).filter((p) => !statement!.params!.includes(p))).toEqual([]);
    expect(statement).toMatchSnapshot();
  });

  it('asks nothing for no tenants', async () => {
    expect(await record(() => repository.acceptedSpans([], monthStart))).toEqual([]);
  });
});
