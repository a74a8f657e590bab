import type { CostReport, ReportFeedbackSummary, ReportTotals } from './report.model';
import { renderCostChart } from './render.chart';
import {
  formatAverage,
  formatChange,
  formatCount,
  formatDuration,
  formatLocalTime,
  formatUsd,
  formatWindowLength,
  keysLabel,
} from './render.format';
import { escapeHtml as esc } from './html.escape';

/**
 * The report as one standalone HTML5 page: inline CSS and SVG, no script, no external resource (the
 * CSP meta forbids both, so a page saved or mailed elsewhere fetches nothing). Every piece of report
 * text is escaped. Output depends only on the report, so the same report gives the same bytes.
 */

/** Allows the inline <style> and nothing else: no scripts, images, fonts or connections. */
const CSP = "default-src 'none'; style-src 'unsafe-inline'";

const STYLE = `
*{box-sizing:border-box}
body{margin:0;background:#f6f7f9;color:#1d2433;font:14px/1.45 system-ui,-apple-system,"Segoe UI",Roboto,"Helvetica Neue",Arial,sans-serif}
main{max-width:1000px;margin:0 auto;padding:32px 24px 48px}
h1{font-size:24px;margin:0 0 4px}
h2{font-size:16px;margin:0 0 12px}
.window{font-size:15px;margin:0}
.muted{color:#667085}
.small{font-size:12px}
section{background:#fff;border:1px solid #e4e7ec;border-radius:10px;padding:18px 20px;margin-top:20px}
header{margin-bottom:4px}
.cards{display:grid;grid-template-columns:repeat(5,1fr);gap:12px;margin-top:20px}
.card{background:#fff;border:1px solid #e4e7ec;border-radius:10px;padding:14px 16px}
.card .metric{color:#667085;font-size:12px;text-transform:uppercase;letter-spacing:.04em}
.card .value{font-size:22px;font-weight:650;margin:4px 0;font-variant-numeric:tabular-nums;white-space:nowrap}
.card .change{font-size:13px;white-space:nowrap}
.up{color:#b42318}.down{color:#067647}.flat,.none{color:#667085}
.chart{display:block;max-width:100%;height:auto}
.chart rect{fill:#3e63dd}
.chart text{font-size:12px;fill:#1d2433}
.chart .value{fill:#475467;font-variant-numeric:tabular-nums}
table{width:100%;border-collapse:collapse}
th,td{text-align:left;padding:7px 10px;border-bottom:1px solid #eef0f3;vertical-align:top}
th{font-size:12px;color:#667085;font-weight:600;text-transform:uppercase;letter-spacing:.03em}
td.num,th.num{text-align:right;font-variant-numeric:tabular-nums;white-space:nowrap}
tbody tr:last-child td{border-bottom:0}
code{font:12px ui-monospace,SFMono-Regular,Menlo,Consolas,monospace;word-break:break-all}
.chip{display:inline-block;background:#f2f4f7;border-radius:999px;padding:1px 8px;margin:0 4px 4px 0;font-size:12px;white-space:nowrap}
.empty{color:#667085;margin:0}
footer{margin-top:20px;text-align:center}
@media (max-width:760px){.cards{grid-template-columns:repeat(2,1fr)}}
@media print{body{background:#fff}section,.card{break-inside:avoid}}
`;

interface Column<Row> {
  title: string;
  numeric?: boolean;
  /** Cell HTML, already escaped. */
  html: (row: Row) => string;
}

function table<Row>(columns: Column<Row>[], rows: Row[], empty: string): string {
  if (rows.length === 0) return `<p class="empty">${esc(empty)}</p>`;
  const head = columns.map((column) => `<th${column.numeric ? ' class="num"' : ''}>${esc(column.title)}</th>`).join('');
  const body = rows.map(
    (row) => `<tr>${columns.map((column) => `<td${column.numeric ? ' class="num"' : ''}>${column.html(row)}</td>`).join('')}</tr>`,
  );
  return `<table>\n<thead><tr>${head}</tr></thead>\n<tbody>\n${body.join('\n')}\n</tbody>\n</table>`;
}

/** 'SPAN_TYPE' → 'Span type': CostDimension names as column titles. */
function dimensionTitle(dimension: string): string {
  const words = dimension.toLowerCase().replace(/_/g, ' ');
  return words.charAt(0).toUpperCase() + words.slice(1);
}

function card(metric: string, value: string, change: number | null | undefined, previous: string): string {
  const changeHtml =
    change === undefined ? '' : (({ direction, text }) => `<span class="${direction}">${esc(text)}</span> `)(formatChange(change));
  return [
    `<div class="card"><div class="metric">${esc(metric)}</div>`,
    `<div class="value">${esc(value)}</div>`,
    `<div class="change">${changeHtml}<span class="muted">vs ${esc(previous)}</span></div></div>`,
  ].join('');
}

function totalsCards(report: CostReport): string {
  const { totals: now, previousTotals: before, change } = report;
  const count = (field: keyof ReportTotals) => [formatCount(now[field]), formatCount(before[field])] as const;
  return [
    '<div class="cards">',
    card('Cost', formatUsd(now.costUsd), change.costUsd, formatUsd(before.costUsd)),
    card('Input tokens', count('inputTokens')[0], change.inputTokens, count('inputTokens')[1]),
    card('Output tokens', count('outputTokens')[0], change.outputTokens, count('outputTokens')[1]),
    card('Traces', count('traceCount')[0], change.traceCount, count('traceCount')[1]),
    // The report carries no span-count change; show the previous value alone rather than derive one.
    card('Spans', count('spanCount')[0], undefined, count('spanCount')[1]),
    '</div>',
  ].join('\n');
}

function feedbackChips(feedback: ReportFeedbackSummary[]): string {
  if (feedback.length === 0) return '<span class="muted">–</span>';
  return feedback
    .map((score) => {
      const avg = score.avg === null || !Number.isFinite(score.avg) ? '' : ` <b>${esc(formatAverage(score.avg))}</b>`;
      return `<span class="chip">${esc(score.name)}${avg} <span class="muted">(${esc(formatCount(score.count))})</span></span>`;
    })
    .join('');
}

function share(costUsd: number, totalUsd: number): string {
  if (totalUsd <= 0) return '–';
  const percent = (costUsd / totalUsd) * 100;
  return percent > 0 && percent < 0.1 ? '<0.1%' : `${percent.toFixed(1)}%`;
}

export function renderReportHtml(report: CostReport): string {
  const tz = report.timezone;
  const local = (iso: string) => formatLocalTime(iso, tz);
  const windowText = `${local(report.windowStart)} → ${local(report.windowEnd)}`;
  const windowMs = Date.parse(report.windowEnd) - Date.parse(report.windowStart);
  const groupTitle = report.groupBy.map(dimensionTitle).join(' · ') || 'Total';
  const chartTitle = `Cost by ${groupTitle}`;
  const chart = renderCostChart(report.breakdown, chartTitle);

  const breakdown = table(
    [
      ...report.groupBy.map((dimension, at) => ({
        title: dimensionTitle(dimension),
        html: (row: CostReport['breakdown'][number]) => esc(keysLabel([row.keys[at] ?? ''])),
      })),
      { title: 'Cost', numeric: true, html: (row) => esc(formatUsd(row.costUsd)) },
      { title: 'Share', numeric: true, html: (row) => esc(share(row.costUsd, report.totals.costUsd)) },
      { title: 'Input tokens', numeric: true, html: (row) => esc(formatCount(row.inputTokens)) },
      { title: 'Output tokens', numeric: true, html: (row) => esc(formatCount(row.outputTokens)) },
      { title: 'Spans', numeric: true, html: (row) => esc(formatCount(row.spanCount)) },
    ],
    report.breakdown,
    'No spans in this window.',
  );

  const sessions = table<CostReport['topSessions'][number]>(
    [
      { title: 'Session', html: (session) => `<code>${esc(session.sessionId)}</code>` },
      { title: 'Cost', numeric: true, html: (session) => esc(formatUsd(session.costUsd)) },
      { title: 'Traces', numeric: true, html: (session) => esc(formatCount(session.traceCount)) },
      ...(report.includeFeedback
        ? [{ title: 'Feedback', html: (session: CostReport['topSessions'][number]) => feedbackChips(session.feedback) }]
        : []),
    ],
    report.topSessions,
    'No sessions in this window.',
  );

  const traces = table<CostReport['topTraces'][number]>(
    [
      { title: 'Trace', html: (trace) => `<code>${esc(trace.traceId)}</code>` },
      { title: 'Root span', html: (trace) => (trace.rootName === null ? '<span class="muted">–</span>' : esc(trace.rootName)) },
      { title: 'Cost', numeric: true, html: (trace) => esc(formatUsd(trace.costUsd)) },
      { title: 'Duration', numeric: true, html: (trace) => esc(formatDuration(trace.durationMs)) },
      { title: 'Started', numeric: true, html: (trace) => esc(local(trace.startTime)) },
    ],
    report.topTraces,
    'No traces in this window.',
  );

  const scheduleText = report.scheduleId === null ? 'run by hand' : `schedule ${report.scheduleId}`;
  return `<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta http-equiv="Content-Security-Policy" content="${esc(CSP)}">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="color-scheme" content="light">
<title>${esc(`Cost report · ${report.projectName} · ${windowText}`)}</title>
<style>${STYLE}</style>
</head>
<body>
<main>
<header>
<h1>${esc(`Cost report: ${report.projectName}`)}</h1>
<p class="window">${esc(windowText)} <span class="muted">(${esc(tz)})</span></p>
<p class="muted small">${esc(`${report.windowStart} → ${report.windowEnd} · changes are against the ${formatWindowLength(windowMs)} before`)}</p>
</header>
${totalsCards(report)}
<section>
<h2>${esc(chartTitle)}</h2>
${chart || '<p class="empty">No cost in this window.</p>'}
</section>
<section>
<h2>Breakdown</h2>
${breakdown}
</section>
<section>
<h2>Top sessions by cost</h2>
${sessions}
</section>
<section>
<h2>Most expensive traces</h2>
${traces}
</section>
<footer class="muted small">${esc(`Report ${report.id} · project ${report.projectId} · ${scheduleText} · generated ${local(report.generatedAt)} ${tz} (${report.generatedAt})`)}</footer>
</main>
</body>
</html>
`;
}
