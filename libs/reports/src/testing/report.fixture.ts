import { computeChange, type CostReport, type ReportBreakdownRow, type ReportTotals } from '../report.model';

/** Costs per model and day, the way `costBreakdown(groupBy: [MODEL, DAY])` returns them. */
const ROWS: Array<[model: string, day: string, costUsd: number, inputTokens: number, outputTokens: number, spanCount: number]> = [
  ['gpt-4o', '2025-06-01', 612.4375, 98_123_400, 12_410_220, 40_210],
  ['gpt-4o', '2025-06-02', 587.125, 94_002_110, 11_902_000, 38_994],
  ['claude-3-5-sonnet-20241022', '2025-06-01', 301.2, 61_200_000, 7_020_400, 12_004],
  ['claude-3-5-sonnet-20241022', '2025-06-02', 289.95, 58_990_120, 6_880_000, 11_870],
  ['gpt-4o-mini', '2025-06-01', 12.3456, 61_000_000, 4_200_000, 80_112],
  ['gpt-4o-mini', '2025-06-02', 11.0021, 55_400_000, 3_910_000, 76_400],
  ['text-embedding-3-small', '2025-06-01', 0.84, 42_000_000, 0, 9_000],
  ['text-embedding-3-small', '2025-06-02', 0.00042, 21_000, 0, 3],
  ['', '2025-06-02', 0, 0, 0, 512],
];

export function sampleBreakdown(): ReportBreakdownRow[] {
  return ROWS.map(([model, day, costUsd, inputTokens, outputTokens, spanCount]) => ({
    keys: [model, day],
    costUsd,
    inputTokens,
    outputTokens,
    spanCount,
  }));
}

/**
 * A two-day MODEL × DAY report of a busy project, with feedback: realistic magnitudes from
 * fractions of a cent to thousands of dollars. Totals are the breakdown's sums.
 */
export function sampleReport(overrides: Partial<CostReport> = {}): CostReport {
  const breakdown = sampleBreakdown();
  const sum = (field: 'costUsd' | 'inputTokens' | 'outputTokens' | 'spanCount') => breakdown.reduce((total, row) => total + row[field], 0);
  const totals: ReportTotals = {
    costUsd: sum('costUsd'),
    inputTokens: sum('inputTokens'),
    outputTokens: sum('outputTokens'),
    traceCount: 18_412,
    spanCount: sum('spanCount'),
  };
  const previousTotals: ReportTotals = {
    costUsd: 1450.5,
    inputTokens: 402_000_000,
    outputTokens: 49_000_000,
    traceCount: 0,
    spanCount: 260_000,
  };
  return {
    id: 'rep_01JXAMPLE',
    projectId: 'proj_42',
    projectName: 'Support copilot (prod)',
    scheduleId: 'sch_daily_ops',
    windowStart: '2025-05-31T23:00:00.000Z',
    windowEnd: '2025-06-02T23:00:00.000Z',
    timezone: 'Europe/Lisbon',
    generatedAt: '2025-06-02T23:00:04.512Z',
    totals,
    previousTotals,
    change: computeChange(totals, previousTotals),
    groupBy: ['MODEL', 'DAY'],
    breakdown,
    topSessions: [
      {
        sessionId: 'sess-7f3a9c',
        costUsd: 48.1234,
        traceCount: 212,
        feedback: [
          { name: 'helpfulness', count: 14, avg: 0.7857142857 },
          { name: 'resolution', count: 9, avg: null },
        ],
      },
      { sessionId: 'sess-19be02', costUsd: 31.5, traceCount: 96, feedback: [{ name: 'helpfulness', count: 3, avg: 1 }] },
      { sessionId: 'sess-00c1d4', costUsd: 0.0042, traceCount: 2, feedback: [] },
    ],
    topTraces: [
      {
        traceId: '4bf92f3577b34da6a3ce929d0e0e4736',
        rootName: 'agent.run refund-dispute',
        costUsd: 6.2188,
        durationMs: 245_310,
        startTime: '2025-06-02T14:03:11.120Z',
      },
      {
        traceId: '00f067aa0ba902b7a3ce929d0e0e4736',
        rootName: 'chat',
        costUsd: 2.5,
        durationMs: 18_420,
        startTime: '2025-06-01T09:15:00.000Z',
      },
      {
        traceId: '5b8efff798038103d269b633813fc60c',
        rootName: null,
        costUsd: 0.00042,
        durationMs: 640,
        startTime: '2025-06-01T23:59:59.999Z',
      },
    ],
    includeFeedback: true,
    ...overrides,
  };
}
