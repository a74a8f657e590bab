import { retries } from './retry.analysis';
import { shuffled, span } from './testing/span.fixture';

describe('retries', () => {
  const agent = span('agent', '', 0, 5000, { type: 'AGENT' });

  it('groups two failures followed by a success under one parent', () => {
    const attempts = [
      span('fail-1', 'agent', 10, 310, { type: 'LLM', status: 'ERROR' }),
      span('fail-2', 'agent', 400, 900, { type: 'LLM', status: 'ERROR' }),
      span('ok', 'agent', 1000, 2000, { type: 'LLM', status: 'OK' }),
    ];

    const result = retries(shuffled([agent, ...attempts], 5));

    expect(result.groups).toEqual([
      { parentSpanId: 'agent', failedSpanIds: ['fail-1', 'fail-2'], succeededSpanId: 'ok', failedMs: 310 - 10 + (900 - 400) },
    ]);
    expect(result.failedAttempts).toBe(2);
  });

  it('reports no group when the failures are never followed by a success', () => {
    const spans = [
      agent,
      span('ok', 'agent', 10, 100, { type: 'LLM' }),
      span('fail-1', 'agent', 200, 300, { type: 'LLM', status: 'ERROR' }),
      span('fail-2', 'agent', 400, 500, { type: 'LLM', status: 'ERROR' }),
    ];

    expect(retries(spans)).toEqual({ groups: [], failedAttempts: 0 });
  });

  it('starts a new group after each success', () => {
    const spans = [
      agent,
      span('fail-1', 'agent', 10, 100, { type: 'LLM', status: 'ERROR' }),
      span('ok-1', 'agent', 110, 200, { type: 'LLM' }),
      span('ok-2', 'agent', 210, 300, { type: 'LLM' }),
      span('fail-2', 'agent', 310, 400, { type: 'LLM', status: 'ERROR' }),
      span('ok-3', 'agent', 410, 500, { type: 'LLM' }),
    ];

    expect(retries(spans).groups.map((group) => [group.failedSpanIds, group.succeededSpanId])).toEqual([
      [['fail-1'], 'ok-1'],
      [['fail-2'], 'ok-3'],
    ]);
  });

  it('counts an UNSET status as success and lets tool spans sit between attempts', () => {
    const spans = [
      agent,
      span('fail', 'agent', 10, 100, { type: 'LLM', status: 'ERROR' }),
      span('tool', 'agent', 110, 150, { type: 'TOOL', status: 'ERROR' }),
      span('unset', 'agent', 200, 300, { type: 'LLM', status: 'UNSET' }),
    ];

    expect(retries(spans).groups).toEqual([{ parentSpanId: 'agent', failedSpanIds: ['fail'], succeededSpanId: 'unset', failedMs: 90 }]);
  });

  it('does not pair failures and successes under different parents, and finds groups per parent in time order', () => {
    const spans = [
      span('root', '', 0, 5000, { type: 'RUN' }),
      span('agent-1', 'root', 0, 1000, { type: 'AGENT' }),
      span('agent-2', 'root', 1000, 2000, { type: 'AGENT' }),
      span('fail-a', 'agent-1', 10, 20, { type: 'LLM', status: 'ERROR' }),
      span('ok-b', 'agent-2', 1010, 1020, { type: 'LLM' }),
      span('fail-b', 'agent-2', 1030, 1040, { type: 'LLM', status: 'ERROR' }),
      span('ok-b2', 'agent-2', 1050, 1060, { type: 'LLM' }),
      span('fail-c', 'gone', 3000, 3010, { type: 'LLM', status: 'ERROR' }),
      span('ok-c', 'gone', 3020, 3030, { type: 'LLM' }),
    ];

    const result = retries(shuffled(spans, 9));

    expect(result.groups.map((group) => [group.parentSpanId, group.failedSpanIds, group.succeededSpanId])).toEqual([
      ['agent-2', ['fail-b'], 'ok-b2'],
      ['gone', ['fail-c'], 'ok-c'],
    ]);
    expect(result.failedAttempts).toBe(2);
  });
});
