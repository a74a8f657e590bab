import type { CostReport, ReportTotals } from './report.model';
import { feedbackListText } from './render.format';

/**
 * The report as CSV, RFC 4180: CRLF after every record, fields quoted when they hold a comma,
 * quote, CR or LF, quotes inside doubled. One file, five sections separated by an empty record,
 * each section after the header block opening with a one-cell title record and a column record:
 *
 *   header block   key,value records: project, ids, window, time zone, generated, group_by
 *   Totals         metric,current,previous,change (change relative: 0.25 = +25 %, empty when previous is 0)
 *   Breakdown      one column per groupBy dimension (lower case), cost_usd, input_tokens, output_tokens, span_count
 *   Top sessions   session_id, cost_usd, trace_count, and feedback ("name=avg (n)"; "; ") when included
 *   Top traces     trace_id, root_name, cost_usd, duration_ms, start_time
 *
 * Numbers are written as plain decimals at full precision (no grouping, no exponent), so a
 * spreadsheet reads them as numbers and sums match the report's JSON.
 */

type Cell = string | number | null | undefined;

/**
 * Cells a spreadsheet would run as a formula (OWASP "CSV Injection"): text starting with one of
 * these gets a leading single quote. Only text cells: the numbers written here are not prefixed,
 * so a negative change stays a number.
 */
const FORMULA_START = /^[=+\-@\t\r]/;

export function csvText(value: string): string {
  const safe = FORMULA_START.test(value) ? `'${value}` : value;
  return /[",\r\n]/.test(safe) ? `"${safe.replace(/"/g, '""')}"` : safe;
}

/** A finite number as a plain decimal: String() except where it would switch to exponent form. */
export function csvNumber(value: number): string {
  if (!Number.isFinite(value)) return '';
  const text = String(value);
  const exponentAt = text.indexOf('e');
  if (exponentAt < 0) return text;
  // Exponent form (below 1e-6, from 1e21): move the point in String()'s shortest round-trip digits,
  // so the decimal parses back to the same double (toFixed would round to a fixed digit count).
  const sign = value < 0 ? '-' : '';
  const mantissa = text.slice(sign.length, exponentAt);
  const digits = mantissa.replace('.', '');
  const point = (mantissa.includes('.') ? mantissa.indexOf('.') : mantissa.length) + Number(text.slice(exponentAt + 1));
  if (point <= 0) return `${sign}0.${'0'.repeat(-point)}${digits}`;
  if (point >= digits.length) return `${sign}${digits}${'0'.repeat(point - digits.length)}`;
  return `${sign}${digits.slice(0, point)}.${digits.slice(point)}`;
}

function csvCell(value: Cell): string {
  if (value === null || value === undefined) return '';
  return typeof value === 'number' ? csvNumber(value) : csvText(value);
}

const CRLF = '\r\n';

function csvRecord(cells: Cell[]): string {
  return cells.map(csvCell).join(',') + CRLF;
}

const TOTALS: Array<[label: string, field: keyof ReportTotals]> = [
  ['cost_usd', 'costUsd'],
  ['input_tokens', 'inputTokens'],
  ['output_tokens', 'outputTokens'],
  ['trace_count', 'traceCount'],
  ['span_count', 'spanCount'],
];

export function renderReportCsv(report: CostReport): string {
  const records: Cell[][] = [
    ['Spanforge cost report'],
    ['project', report.projectName],
    ['project_id', report.projectId],
    ['report_id', report.id],
    ['schedule_id', report.scheduleId],
    ['window_start', report.windowStart],
    ['window_end', report.windowEnd],
    ['timezone', report.timezone],
    ['generated_at', report.generatedAt],
    ['group_by', ...report.groupBy],
    ['include_feedback', String(report.includeFeedback)],
    [],
    ['Totals'],
    ['metric', 'current', 'previous', 'change'],
    ...TOTALS.map(([label, field]) => [
      label,
      report.totals[field],
      report.previousTotals[field],
      field === 'spanCount' ? null : report.change[field],
    ]),
    [],
    ['Breakdown'],
    [...report.groupBy.map((dimension) => dimension.toLowerCase()), 'cost_usd', 'input_tokens', 'output_tokens', 'span_count'],
    ...report.breakdown.map((row) => [...row.keys, row.costUsd, row.inputTokens, row.outputTokens, row.spanCount]),
    [],
    ['Top sessions'],
    ['session_id', 'cost_usd', 'trace_count', ...(report.includeFeedback ? ['feedback'] : [])],
    ...report.topSessions.map((session) => [
      session.sessionId,
      session.costUsd,
      session.traceCount,
      ...(report.includeFeedback ? [feedbackListText(session.feedback)] : []),
    ]),
    [],
    ['Top traces'],
    ['trace_id', 'root_name', 'cost_usd', 'duration_ms', 'start_time'],
    ...report.topTraces.map((trace) => [trace.traceId, trace.rootName, trace.costUsd, trace.durationMs, trace.startTime]),
  ];
  return records.map(csvRecord).join('');
}
