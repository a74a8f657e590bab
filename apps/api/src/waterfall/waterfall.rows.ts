/** SVG for the rows of the waterfall: one `<g class="span">` or `<g class="summary">` per row. */
import { escapeXml, formatCount, formatDuration, px, textWidth, truncate } from './waterfall.format';
import { SpanRow, SummaryRow, WaterfallRow } from './waterfall.layout';
import { CRITICAL_BAND, CRITICAL_INK, ERROR_RED, INK, MUTED_INK, TYPE_COLOUR, ZEBRA, inkOn } from './waterfall.palette';

export const ROW_HEIGHT = 20;
const BAR_HEIGHT = 12;
/** Baseline of 12px text centred in a 20px row. */
const TEXT_BASELINE = 14;
const INDENT = 12;
/** Room between a bar and its duration label. */
const LABEL_GAP = 4;

/** Where things go, in px; time maps to x as `barX0 + (t - t0) * pxPerMs`. */
export interface Frame {
  width: number;
  /** Left edge of the critical-path marker gutter; labels start `MARKER_GUTTER` further right. */
  gutterX: number;
  labelX: number;
  labelWidth: number;
  barX0: number;
  barX1: number;
  rowsY: number;
  t0: number;
  pxPerMs: number;
}

export const MARKER_GUTTER = 12;
export const HATCH_ID = 'wf-error-hatch';

/** Zebra stripes and the critical-path band, drawn under the grid lines. */
export function renderRowBackgrounds(out: string[], rows: readonly WaterfallRow[], f: Frame): void {
  rows.forEach((row, i) => {
    const critical = row.kind === 'span' && row.critical;
    if (!critical && i % 2 === 0) return;
    const cls = critical ? 'cp-band' : 'zebra';
    const fill = critical ? CRITICAL_BAND : ZEBRA;
    out.push(`<rect class="${cls}" x="0" y="${px(f.rowsY + i * ROW_HEIGHT)}" width="${f.width}" height="${ROW_HEIGHT}" fill="${fill}"/>`);
  });
}

export function renderRows(out: string[], rows: readonly WaterfallRow[], f: Frame): void {
  rows.forEach((row, i) => {
    const y = f.rowsY + i * ROW_HEIGHT;
    if (row.kind === 'span') renderSpanRow(out, row, y, f);
    else renderSummaryRow(out, row, y, f);
  });
}

/** Indentation is capped at 40% of the label column so deep trees keep some of every name. */
function indentOf(depth: number, f: Frame): number {
  return Math.min(depth * INDENT, Math.floor((f.labelWidth * 0.4) / INDENT) * INDENT);
}

function renderSpanRow(out: string[], row: SpanRow, y: number, f: Frame): void {
  const { span } = row;
  const error = span.status === 'ERROR';
  const duration = formatDuration(span.endMs - span.startMs);
  const notes = [span.type, duration, ...(error ? ['ERROR'] : []), ...(row.critical ? ['critical path'] : [])];
  out.push(`<g class="span"><title>${escapeXml(`${span.name} — ${notes.join(' · ')}`)}</title>`);

  if (row.critical) {
    const my = y + ROW_HEIGHT / 2;
    out.push(
      `<path class="cp-marker" d="M${px(f.gutterX + 2)} ${px(my - 5)}L${px(f.gutterX + 9)} ${px(my)}L${px(f.gutterX + 2)} ${px(my + 5)}Z" fill="${CRITICAL_INK}"/>`,
    );
  }

  const indent = indentOf(row.depth, f);
  const labelInk = error ? ERROR_RED : INK;
  const weight = row.critical ? ' font-weight="bold"' : '';
  out.push(
    `<text class="label" x="${px(f.labelX + indent)}" y="${px(y + TEXT_BASELINE)}" fill="${labelInk}"${weight}>${escapeXml(truncate(span.name, f.labelWidth - indent, { bold: row.critical }))}</text>`,
  );

  // Zero-duration (and sub-pixel) spans still get a 1px bar.
  const x = f.barX0 + (span.startMs - f.t0) * f.pxPerMs;
  const w = Math.max(1, (span.endMs - span.startMs) * f.pxPerMs);
  const barY = y + (ROW_HEIGHT - BAR_HEIGHT) / 2;
  const geometry = `x="${px(x)}" y="${px(barY)}" width="${px(w)}" height="${BAR_HEIGHT}"`;
  const fill = TYPE_COLOUR[span.type];
  const outline = row.critical
    ? `stroke="${CRITICAL_INK}" stroke-width="2"`
    : error
      ? `stroke="${ERROR_RED}" stroke-width="1.5"`
      : 'stroke="#000000" stroke-opacity="0.25" stroke-width="1"';
  out.push(`<rect class="bar" ${geometry} fill="${fill}" ${outline}/>`);
  if (error) out.push(`<rect class="err" ${geometry} fill="url(#${HATCH_ID})"/>`);

  out.push(durationLabel(duration, x, w, y + TEXT_BASELINE, fill, f));
  out.push('</g>');
}

/** Right of the bar when it fits, else inside its right end, else left of it. */
function durationLabel(text: string, x: number, w: number, baseline: number, fill: string, f: Frame): string {
  const tw = textWidth(text, { fontSize: 11 });
  const label = escapeXml(text); // "< 1 ms"
  const attrs = `class="dur" y="${px(baseline)}" font-size="11"`;
  if (x + w + LABEL_GAP + tw <= f.barX1) {
    return `<text ${attrs} x="${px(x + w + LABEL_GAP)}" fill="${MUTED_INK}">${label}</text>`;
  }
  if (w >= tw + 2 * LABEL_GAP) {
    return `<text ${attrs} x="${px(x + w - LABEL_GAP)}" text-anchor="end" fill="${inkOn(fill)}">${label}</text>`;
  }
  return `<text ${attrs} x="${px(x - LABEL_GAP)}" text-anchor="end" fill="${MUTED_INK}">${label}</text>`;
}

export function summaryText(row: SummaryRow): string {
  const noun = row.hiddenCount === 1 ? 'span' : 'spans';
  const where = row.parent === null ? 'at the top level' : `under ${row.parent.name}`;
  const types = row.byType.map(([type, n]) => `${type} ×${formatCount(n)}`).join(', ');
  const errors = row.errorCount === 0 ? '' : `; ${formatCount(row.errorCount)} ${row.errorCount === 1 ? 'error' : 'errors'}`;
  return `… ${formatCount(row.hiddenCount)} more ${noun} ${where} (${types}${errors})`;
}

/** A summary row has no bar, so its text may run across the whole chart. */
function renderSummaryRow(out: string[], row: SummaryRow, y: number, f: Frame): void {
  const text = summaryText(row);
  const indent = indentOf(row.depth, f);
  out.push(
    `<g class="summary"><title>${escapeXml(text)}</title>` +
      `<text class="summary-label" x="${px(f.labelX + indent)}" y="${px(y + TEXT_BASELINE)}" fill="${row.errorCount > 0 ? ERROR_RED : MUTED_INK}" font-style="italic">${escapeXml(truncate(text, f.barX1 - f.labelX - indent))}</text></g>`,
  );
}
