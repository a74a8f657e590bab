import { parse } from 'csv-parse/sync';
import { csvNumber, csvText, renderReportCsv } from './render.csv';
import { feedbackListText } from './render.format';
import type { CostReport } from './report.model';
import { sampleReport } from './testing/report.fixture';

/** The CSV parsed back by a CSV library, split into its sections at the empty records. */
function sections(csv: string): string[][][] {
  const records: string[][] = parse(csv, { relax_column_count: true });
  const result: string[][][] = [[]];
  for (const record of records) {
    if (record.length === 1 && record[0] === '') result.push([]);
    else result[result.length - 1].push(record);
  }
  return result;
}

const asText = (value: number | string | null) => (value === null ? '' : String(value));

describe('renderReportCsv', () => {
  const report = sampleReport();
  const csv = renderReportCsv(report);
  const [header, totals, breakdown, sessions, traces] = sections(csv);

  it('ends every record with CRLF and has no bare LF', () => {
    expect(csv.endsWith('\r\n')).toBe(true);
    expect(csv.replace(/\r\n/g, '')).not.toMatch(/[\r\n]/);
  });

  it('opens with the header block', () => {
    expect(header).toEqual([
      ['Spanforge cost report'],
      ['project', report.projectName],
      ['project_id', report.projectId],
      ['report_id', report.id],
      ['schedule_id', asText(report.scheduleId)],
      ['window_start', report.windowStart],
      ['window_end', report.windowEnd],
      ['timezone', report.timezone],
      ['generated_at', report.generatedAt],
      ['group_by', ...report.groupBy],
      ['include_feedback', 'true'],
    ]);
  });

  it('lists totals with the previous window and the relative change, empty where previous was 0', () => {
    expect(totals[0]).toEqual(['Totals']);
    expect(totals[1]).toEqual(['metric', 'current', 'previous', 'change']);
    const byMetric = Object.fromEntries(totals.slice(2).map(([metric, ...values]) => [metric, values]));
    expect(Object.keys(byMetric)).toEqual(['cost_usd', 'input_tokens', 'output_tokens', 'trace_count', 'span_count']);
    expect(byMetric.cost_usd.map(Number)).toEqual([report.totals.costUsd, report.previousTotals.costUsd, report.change.costUsd]);
    expect(byMetric.input_tokens.map(Number)).toEqual([
      report.totals.inputTokens,
      report.previousTotals.inputTokens,
      report.change.inputTokens,
    ]);
    expect(byMetric.output_tokens.map(Number)).toEqual([
      report.totals.outputTokens,
      report.previousTotals.outputTokens,
      report.change.outputTokens,
    ]);
    // The fixture's previous trace count is 0, so there is no ratio.
    expect(report.change.traceCount).toBeNull();
    expect(byMetric.trace_count).toEqual([String(report.totals.traceCount), '0', '']);
    expect(byMetric.span_count).toEqual([String(report.totals.spanCount), String(report.previousTotals.spanCount), '']);
  });

  it('writes a falling change as a plain negative number, not a quoted formula guard', () => {
    const falling = sampleReport({ change: { ...report.change, costUsd: -0.25 } });
    const costRow = sections(renderReportCsv(falling))[1].find(([metric]) => metric === 'cost_usd');
    expect(costRow?.[3]).toBe('-0.25');
  });

  it('has one breakdown column per groupBy key, and every row equal to the report', () => {
    expect(breakdown[0]).toEqual(['Breakdown']);
    expect(breakdown[1]).toEqual(['model', 'day', 'cost_usd', 'input_tokens', 'output_tokens', 'span_count']);
    const rows = breakdown.slice(2).map(([model, day, ...numbers]) => ({ keys: [model, day], numbers: numbers.map(Number) }));
    expect(rows).toEqual(
      report.breakdown.map((row) => ({ keys: row.keys, numbers: [row.costUsd, row.inputTokens, row.outputTokens, row.spanCount] })),
    );
  });

  it('lists top sessions with feedback as "name=avg (n)" joined by "; "', () => {
    expect(sessions[1]).toEqual(['session_id', 'cost_usd', 'trace_count', 'feedback']);
    expect(sessions.slice(2)).toEqual(
      report.topSessions.map((session) => [
        session.sessionId,
        String(session.costUsd),
        String(session.traceCount),
        feedbackListText(session.feedback),
      ]),
    );
    expect(sessions[2][3]).toBe('helpfulness=0.7857 (14); resolution (9)');
  });

  it('leaves the feedback column out when the schedule does not include feedback', () => {
    const withoutFeedback = sections(renderReportCsv(sampleReport({ includeFeedback: false })))[3];
    expect(withoutFeedback[1]).toEqual(['session_id', 'cost_usd', 'trace_count']);
    expect(withoutFeedback.slice(2).every((record) => record.length === 3)).toBe(true);
  });

  it('lists the top traces, a missing root name as an empty cell', () => {
    expect(traces[0]).toEqual(['Top traces']);
    expect(traces[1]).toEqual(['trace_id', 'root_name', 'cost_usd', 'duration_ms', 'start_time']);
    expect(traces.slice(2)).toEqual(
      report.topTraces.map((trace) => [
        trace.traceId,
        asText(trace.rootName),
        String(trace.costUsd),
        String(trace.durationMs),
        trace.startTime,
      ]),
    );
  });

  it('quotes commas, quotes, CR and LF so the values parse back unchanged', () => {
    const awkward = 'summarise "Q3", then\r\nemail\nthe team\r';
    const parsed = sections(
      renderReportCsv(sampleReport({ projectName: awkward, topTraces: [{ ...report.topTraces[0], rootName: awkward }] })),
    );
    expect(parsed[0][1]).toEqual(['project', awkward]);
    expect(parsed[4][2][1]).toBe(awkward);
  });

  it.each([['=HYPERLINK("http://evil.example","click")'], ['+1+1'], ['-2+3'], ['@SUM(A1:A2)'], ['\t=1+1'], ['\r=1+1']])(
    'prefixes a text cell starting with a formula character: %p',
    (hostile) => {
      const hostileReport: CostReport = sampleReport({
        projectName: hostile,
        breakdown: [{ ...report.breakdown[0], keys: [hostile, '2025-06-01'] }],
        topSessions: [{ ...report.topSessions[0], sessionId: hostile }],
      });

      const parsed = sections(renderReportCsv(hostileReport));

      expect(parsed[0][1][1]).toBe(`'${hostile}`);
      expect(parsed[2][2][0]).toBe(`'${hostile}`);
      expect(parsed[3][2][0]).toBe(`'${hostile}`);
    },
  );
});

describe('csv cells', () => {
  it('writes numbers as plain decimals that parse back to the same double', () => {
    for (const value of [0, 1, -0.25, 0.1 + 0.2, 1234.5678, 4.2e-4, 1.234e-7, -5e-9, 1e21, 123456789012345680000]) {
      const text = csvNumber(value);
      expect(text).not.toMatch(/e/i);
      expect(Number(text)).toBe(value);
    }
    expect(csvNumber(1.234e-7)).toBe('0.0000001234');
    expect(csvNumber(Number.NaN)).toBe('');
  });

  it('leaves ordinary text alone and guards only leading formula characters', () => {
    expect(csvText('gpt-4o')).toBe('gpt-4o');
    expect(csvText('a=b')).toBe('a=b');
    expect(csvText('-')).toBe("'-");
    expect(csvText('=1,2')).toBe(`"'=1,2"`);
  });
});
