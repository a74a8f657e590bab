import type { ReportBreakdownRow } from './report.model';
import { formatUsd, keysLabel } from './render.format';
import { escapeHtml } from './html.escape';

/** Bars drawn: more than a dozen labels stop being readable at a glance; the table has every row. */
export const CHART_MAX_BARS = 12;

const WIDTH = 800;
/** Fits LABEL_MAX_CHARS of 12 px sans-serif (about 6.5 px a character on average). */
const LABEL_WIDTH = 310;
/** Room right of the longest bar for its value label ("$12,345.67"). */
const VALUE_WIDTH = 100;
const ROW_HEIGHT = 28;
const BAR_HEIGHT = 18;
const PADDING_Y = 6;
/** Labels longer than this are cut with an ellipsis (SVG text does not wrap); the <title> keeps the full text. */
export const LABEL_MAX_CHARS = 46;

/** The rows the chart shows: highest cost first, ties by label, so the order never depends on input order. */
export function chartRows(breakdown: ReportBreakdownRow[], max = CHART_MAX_BARS): ReportBreakdownRow[] {
  return [...breakdown].sort((a, b) => b.costUsd - a.costUsd || compareText(keysLabel(a.keys), keysLabel(b.keys))).slice(0, max);
}

function compareText(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

function truncate(label: string): string {
  const chars = [...label];
  return chars.length <= LABEL_MAX_CHARS ? label : `${chars.slice(0, LABEL_MAX_CHARS - 1).join('')}…`;
}

/** Two decimals in coordinates: enough for a crisp edge, and stable text for tests and diffs. */
function px(value: number): string {
  return String(Math.round(value * 100) / 100);
}

/**
 * An inline SVG horizontal bar chart of breakdown rows by cost: label left, bar, USD value right.
 * Bars scale to the largest cost shown; an all-zero chart draws no bars. Empty input gives ''.
 */
export function renderCostChart(breakdown: ReportBreakdownRow[], title: string): string {
  const rows = chartRows(breakdown);
  if (rows.length === 0) return '';
  const height = rows.length * ROW_HEIGHT + 2 * PADDING_Y;
  const barSpace = WIDTH - LABEL_WIDTH - VALUE_WIDTH;
  const maxCost = Math.max(...rows.map((row) => row.costUsd));
  const bars = rows.map((row, at) => {
    const label = keysLabel(row.keys);
    const value = formatUsd(row.costUsd);
    const y = PADDING_Y + at * ROW_HEIGHT;
    const width = maxCost > 0 && row.costUsd > 0 ? Math.max(1, (row.costUsd / maxCost) * barSpace) : 0;
    const textY = px(y + ROW_HEIGHT / 2);
    return [
      `<g class="bar">`,
      `<title>${escapeHtml(`${label}: ${value}`)}</title>`,
      `<text class="label" x="${LABEL_WIDTH - 8}" y="${textY}" text-anchor="end" dominant-baseline="middle">${escapeHtml(truncate(label))}</text>`,
      `<rect x="${LABEL_WIDTH}" y="${px(y + (ROW_HEIGHT - BAR_HEIGHT) / 2)}" width="${px(width)}" height="${BAR_HEIGHT}" rx="3"></rect>`,
      `<text class="value" x="${px(LABEL_WIDTH + width + 6)}" y="${textY}" dominant-baseline="middle">${escapeHtml(value)}</text>`,
      `</g>`,
    ].join('');
  });
  return [
    `<svg class="chart" xmlns="http://www.w3.org/2000/svg" viewBox="0 0 ${WIDTH} ${height}" width="${WIDTH}" height="${height}" role="img" aria-label="${escapeHtml(title)}">`,
    ...bars,
    `</svg>`,
  ].join('\n');
}
