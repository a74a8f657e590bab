import { LABEL_MAX_CHARS } from './render.chart';
import { renderReportHtml } from './render.html';
import { formatUsd } from './render.format';
import type { CostReport } from './report.model';
import { sampleReport } from './testing/report.fixture';

/** Inner text of every element matching an opening-tag pattern, in document order. */
function texts(html: string, openTag: string): string[] {
  return [...html.matchAll(new RegExp(`${openTag}([^<]*)<`, 'g'))].map((match) => match[1]);
}

/** The rows of the first <table> after a heading, as arrays of cell HTML. */
function tableAfter(html: string, heading: string): string[][] {
  const section = html.slice(html.indexOf(`<h2>${heading}</h2>`));
  const body = section.slice(section.indexOf('<tbody>'), section.indexOf('</tbody>'));
  return [...body.matchAll(/<tr>(.*?)<\/tr>/g)].map((row) => [...row[1].matchAll(/<td[^>]*>(.*?)<\/td>/g)].map((cell) => cell[1]));
}

const byCostThenLabel = (a: CostReport['breakdown'][number], b: CostReport['breakdown'][number]) =>
  b.costUsd - a.costUsd || (a.keys.join() < b.keys.join() ? -1 : 1);

describe('renderReportHtml', () => {
  const report = sampleReport();
  const html = renderReportHtml(report);

  it('is a standalone HTML5 page that loads nothing and runs nothing', () => {
    expect(html.startsWith('<!DOCTYPE html>\n<html lang="en">')).toBe(true);
    expect(html).toContain('<meta charset="utf-8">');
    expect(html).toContain(
      `<meta http-equiv="Content-Security-Policy" content="default-src &#39;none&#39;; style-src &#39;unsafe-inline&#39;">`,
    );
    expect(html).not.toMatch(/<script|<link|<img|<iframe|\ssrc=|\shref=|url\(|@import/i);
    // The SVG namespace is a name, not a fetch; no other URL appears.
    expect(html.match(/https?:\/\/[^\s"<]*/g)).toEqual(['http://www.w3.org/2000/svg']);
    expect(html.trimEnd().endsWith('</html>')).toBe(true);
  });

  it('is deterministic, whatever order the breakdown rows arrive in', () => {
    expect(renderReportHtml(sampleReport())).toBe(html);
    const reversed = renderReportHtml(sampleReport({ breakdown: [...report.breakdown].reverse() }));
    const chart = (page: string) => page.slice(page.indexOf('<svg'), page.indexOf('</svg>'));
    expect(chart(reversed)).toBe(chart(html));
  });

  it('heads with the totals and their change against the previous window', () => {
    const cards = texts(html, '<div class="value">');
    expect(cards).toEqual([
      formatUsd(report.totals.costUsd),
      report.totals.inputTokens.toLocaleString('en-US'),
      report.totals.outputTokens.toLocaleString('en-US'),
      report.totals.traceCount.toLocaleString('en-US'),
      report.totals.spanCount.toLocaleString('en-US'),
    ]);
    const costPercent = Math.round(((report.totals.costUsd - report.previousTotals.costUsd) / report.previousTotals.costUsd) * 1000) / 10;
    expect(html).toContain(
      `<span class="up">▲ ${costPercent}%</span> <span class="muted">vs ${formatUsd(report.previousTotals.costUsd)}</span>`,
    );
    // Previous trace count 0: no ratio.
    expect(html).toContain('<span class="none">n/a</span> <span class="muted">vs 0</span>');
  });

  it('shows a fall as ▼ with its percentage', () => {
    const falling = renderReportHtml(sampleReport({ change: { ...report.change, costUsd: -0.125 } }));
    expect(falling).toContain('<span class="down">▼ 12.5%</span>');
  });

  it('draws one bar per breakdown row, highest cost first, labelled with the keys and the cost in USD', () => {
    const expected = [...report.breakdown].sort(byCostThenLabel);
    const labels = texts(html, '<text class="label"[^>]*>');
    expect(labels).toEqual(expected.map((row) => row.keys.map((key) => (key === '' ? '(none)' : key)).join(' · ')));
    expect(texts(html, '<text class="value"[^>]*>')).toEqual(expected.map((row) => formatUsd(row.costUsd)));

    const widths = [...html.matchAll(/<rect [^>]*width="([\d.]+)"/g)].map((match) => Number(match[1]));
    expect(widths).toHaveLength(expected.length);
    expected.forEach((row, at) => expect(widths[at] / widths[0]).toBeCloseTo(row.costUsd > 0 ? row.costUsd / expected[0].costUsd : 0, 2));
  });

  it('cuts a label too long for the chart with an ellipsis, keeping the full text in the bar tooltip', () => {
    const long = `${'very-long-fine-tuned-model-name-'.repeat(3)}v2`;
    const page = renderReportHtml(
      sampleReport({ breakdown: [{ keys: [long, '2025-06-01'], costUsd: 1, inputTokens: 1, outputTokens: 1, spanCount: 1 }] }),
    );
    const [label] = texts(page, '<text class="label"[^>]*>');
    expect(label).toBe(`${long.slice(0, LABEL_MAX_CHARS - 1)}…`);
    expect(page).toContain(`<title>${long} · 2025-06-01: $1.00</title>`);
  });

  it('charts at most the 12 costliest rows but tables them all', () => {
    const many = Array.from({ length: 30 }, (_, at) => ({
      keys: [`model-${String(at).padStart(2, '0')}`, '2025-06-01'],
      costUsd: at + 1,
      inputTokens: 1,
      outputTokens: 1,
      spanCount: 1,
    }));
    const page = renderReportHtml(sampleReport({ breakdown: many }));
    expect(texts(page, '<text class="label"[^>]*>')).toEqual(
      many
        .slice(18)
        .reverse()
        .map((row) => row.keys.join(' · ')),
    );
    expect(tableAfter(page, 'Breakdown')).toHaveLength(30);
  });

  it('tables the breakdown with one column per groupBy dimension', () => {
    expect(html).toContain('<th>Model</th><th>Day</th><th class="num">Cost</th>');
    const rows = tableAfter(html, 'Breakdown');
    expect(rows.map((cells) => cells.slice(0, 3))).toEqual(
      report.breakdown.map((row) => [row.keys[0] || '(none)', row.keys[1], formatUsd(row.costUsd)]),
    );
  });

  it('tables top sessions with their feedback, and leaves feedback out when not included', () => {
    const rows = tableAfter(html, 'Top sessions by cost');
    expect(rows.map((cells) => cells[0])).toEqual(report.topSessions.map((session) => `<code>${session.sessionId}</code>`));
    expect(rows[0][3]).toBe(
      '<span class="chip">helpfulness <b>0.7857</b> <span class="muted">(14)</span></span><span class="chip">resolution <span class="muted">(9)</span></span>',
    );

    const without = renderReportHtml(sampleReport({ includeFeedback: false }));
    expect(without).not.toContain('<th>Feedback</th>');
    expect(tableAfter(without, 'Top sessions by cost').every((cells) => cells.length === 3)).toBe(true);
  });

  it('tables the most expensive traces with local start times', () => {
    const rows = tableAfter(html, 'Most expensive traces');
    expect(rows.map((cells) => cells[0])).toEqual(report.topTraces.map((trace) => `<code>${trace.traceId}</code>`));
    // 2025-06-02T14:03Z is 15:03 in Lisbon (WEST, UTC+1).
    expect(rows[0][4]).toBe('2025-06-02 15:03');
    expect(rows[2][1]).toBe('<span class="muted">–</span>');
  });

  it('says so when the window is empty', () => {
    const empty = renderReportHtml(sampleReport({ breakdown: [], topSessions: [], topTraces: [] }));
    expect(empty).not.toContain('<svg');
    expect(empty).toContain('No cost in this window.');
    expect(empty).toContain('No sessions in this window.');
  });

  it('escapes every piece of report text', () => {
    const attack = '<img src=x onerror=alert(1)>';
    const quoteBreak = `" onmouseover="alert(2)`;
    const hostile = sampleReport({
      projectName: attack,
      projectId: attack,
      id: attack,
      scheduleId: attack,
      timezone: attack,
      groupBy: [quoteBreak, attack],
      breakdown: [{ keys: [attack, quoteBreak], costUsd: 3, inputTokens: 1, outputTokens: 1, spanCount: 1 }],
      topSessions: [{ sessionId: attack, costUsd: 1, traceCount: 1, feedback: [{ name: attack, count: 1, avg: 1 }] }],
      topTraces: [{ traceId: attack, rootName: attack, costUsd: 1, durationMs: 1, startTime: attack }],
    });

    const page = renderReportHtml(hostile);

    expect(page).not.toContain('<img');
    expect(page).not.toContain('" onmouseover=');
    expect(page.split('&lt;img src=x onerror=alert(1)&gt;').length - 1).toBeGreaterThanOrEqual(12);
    expect(page).toContain('&quot; onmouseover=&quot;alert(2)');
  });
});
