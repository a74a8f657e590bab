/**
 * A trace as a standalone SVG 1.1 waterfall: rows in tree order with a label column (indented
 * by depth) and bars on a time axis, coloured by span type, each with its duration; critical-path
 * spans marked; errors hatched in red; past `maxRows` spans, subtrees collapse into summary rows.
 * Pure and deterministic: the same input gives the same string.
 */
import { axisTicks, escapeXml, formatCount, formatDuration, formatTick, px, textWidth, truncate } from './waterfall.format';
import { WaterfallLayout, layoutWaterfall } from './waterfall.layout';
import { WaterfallInput, WaterfallOptions } from './waterfall.model';
import { CRITICAL_BAND, CRITICAL_INK, ERROR_RED, GRID, INK, MUTED_INK, TYPE_COLOUR } from './waterfall.palette';
import { Frame, HATCH_ID, MARKER_GUTTER, ROW_HEIGHT, renderRowBackgrounds, renderRows } from './waterfall.rows';

export * from './waterfall.model';

export const DEFAULT_WIDTH = 1200;
export const DEFAULT_MAX_ROWS = 2000;
const MIN_WIDTH = 480;
const PAD = 12;
const HEADER_HEIGHT = 30;
const LEGEND_LINE = 18;
const AXIS_HEIGHT = 26;
/** Tick labels such as "1 m 30 s" need about this much room each. */
const TICK_SPACING = 90;

export function renderWaterfall(input: WaterfallInput, options: WaterfallOptions = {}): string {
  const width = Math.max(MIN_WIDTH, Math.round(finiteOr(options.width, DEFAULT_WIDTH)));
  const maxRows = Math.max(1, Math.floor(finiteOr(options.maxRows, DEFAULT_MAX_ROWS)));
  const layout = layoutWaterfall(input.spans, input.criticalPath, maxRows);
  const out: string[] = [];

  if (layout.spanCount === 0) {
    const height = HEADER_HEIGHT + 2 * ROW_HEIGHT + PAD;
    open(out, width, height, input.traceId);
    renderHeader(out, width, input.traceId, layout);
    out.push(
      `<text class="empty" x="${width / 2}" y="${HEADER_HEIGHT + ROW_HEIGHT + 4}" text-anchor="middle" fill="${MUTED_INK}">no spans</text>`,
    );
    out.push('</svg>\n');
    return out.join('');
  }

  const legend = legendItems(layout, width);
  const legendLines = legend.reduce((n, item) => Math.max(n, item.line + 1), 0);
  const labelWidth = Math.min(340, Math.max(160, Math.round(width * 0.26)));
  const labelX = PAD + MARKER_GUTTER;
  const barX0 = labelX + labelWidth + 12;
  const barX1 = width - PAD;
  // A zero-length trace draws on a 1 ms scale so its bars sit at the axis origin.
  const axisMs = layout.endMs > layout.startMs ? layout.endMs - layout.startMs : 1;
  const frame: Frame = {
    width,
    gutterX: PAD,
    labelX,
    labelWidth,
    barX0,
    barX1,
    rowsY: HEADER_HEIGHT + legendLines * LEGEND_LINE + AXIS_HEIGHT,
    t0: layout.startMs,
    pxPerMs: (barX1 - barX0) / axisMs,
  };
  const rowsBottom = frame.rowsY + layout.rows.length * ROW_HEIGHT;
  const height = rowsBottom + PAD;

  open(out, width, height, input.traceId);
  renderHeader(out, width, input.traceId, layout);
  renderLegend(out, legend);
  renderRowBackgrounds(out, layout.rows, frame);
  renderAxis(out, frame, axisMs, rowsBottom);
  renderRows(out, layout.rows, frame);
  out.push('</svg>\n');
  return out.join('');
}

function finiteOr(value: number | undefined, fallback: number): number {
  return value !== undefined && Number.isFinite(value) ? value : fallback;
}

function open(out: string[], width: number, height: number, traceId: string): void {
  out.push(
    '<?xml version="1.0" encoding="UTF-8"?>\n',
    `<svg xmlns="http://www.w3.org/2000/svg" version="1.1" width="${width}" height="${height}" viewBox="0 0 ${width} ${height}" font-family="system-ui, -apple-system, 'Segoe UI', Roboto, sans-serif" font-size="12">`,
    `<title>${escapeXml(`Waterfall of trace ${traceId}`)}</title>`,
    '<defs>',
    `<pattern id="${HATCH_ID}" width="6" height="6" patternUnits="userSpaceOnUse" patternTransform="rotate(45)">`,
    `<line x1="0" y1="0" x2="0" y2="6" stroke="${ERROR_RED}" stroke-width="3"/>`,
    '</pattern>',
    '</defs>',
    `<rect class="background" x="0" y="0" width="${width}" height="${height}" fill="#FFFFFF"/>`,
  );
}

function renderHeader(out: string[], width: number, traceId: string, layout: WaterfallLayout): void {
  const facts = [`${formatCount(layout.spanCount)} ${layout.spanCount === 1 ? 'span' : 'spans'}`];
  if (layout.spanCount > 0) facts.push(formatDuration(layout.endMs - layout.startMs));
  if (layout.hiddenCount > 0) facts.push(`${formatCount(layout.hiddenCount)} collapsed into summary rows`);
  const tail = ` · ${facts.join(' · ')}`;
  const room = width - 2 * PAD - textWidth(tail);
  const title = truncate(`Trace ${traceId}`, room, { fontSize: 14, bold: true });
  out.push(
    `<text class="header" x="${PAD}" y="20" fill="${INK}">` +
      `<tspan font-weight="bold" font-size="14">${escapeXml(title)}</tspan>` +
      `<tspan fill="${MUTED_INK}">${escapeXml(tail)}</tspan></text>`,
  );
}

type LegendKind = 'type' | 'critical' | 'error';
interface LegendItem {
  kind: LegendKind;
  label: string;
  fill: string;
  x: number;
  line: number;
}

const SWATCH = 10;
const LEGEND_ITEM_GAP = 18;

/** The types present (in SPAN_TYPES order), then what the outlines mean; wraps to more lines when narrow. */
function legendItems(layout: WaterfallLayout, width: number): LegendItem[] {
  const entries: Array<Pick<LegendItem, 'kind' | 'label' | 'fill'>> = layout.typesPresent.map((t) => ({
    kind: 'type',
    label: t,
    fill: TYPE_COLOUR[t],
  }));
  if (layout.rows.some((r) => r.kind === 'span' && r.critical)) entries.push({ kind: 'critical', label: 'critical path', fill: '#FFFFFF' });
  if (layout.hasError) entries.push({ kind: 'error', label: 'error', fill: '#FFFFFF' });
  const items: LegendItem[] = [];
  let x = PAD;
  let line = 0;
  for (const entry of entries) {
    const w = (entry.kind === 'critical' ? MARKER_GUTTER : 0) + SWATCH + 4 + textWidth(entry.label, { fontSize: 11 });
    if (x > PAD && x + w > width - PAD) {
      x = PAD;
      line++;
    }
    items.push({ ...entry, x, line });
    x += w + LEGEND_ITEM_GAP;
  }
  return items;
}

function renderLegend(out: string[], items: readonly LegendItem[]): void {
  out.push('<g class="legend" font-size="11">');
  for (const item of items) {
    const top = HEADER_HEIGHT + item.line * LEGEND_LINE;
    let x = item.x;
    if (item.kind === 'critical') {
      out.push(`<rect x="${px(x - 2)}" y="${top}" width="${px(MARKER_GUTTER + SWATCH + 6)}" height="14" fill="${CRITICAL_BAND}"/>`);
      out.push(`<path d="M${px(x)} ${top + 2}L${px(x + 7)} ${top + 7}L${px(x)} ${top + 12}Z" fill="${CRITICAL_INK}"/>`);
      x += MARKER_GUTTER;
    }
    const outline = {
      type: 'stroke="#000000" stroke-opacity="0.25"',
      critical: `stroke="${CRITICAL_INK}" stroke-width="2"`,
      error: `stroke="${ERROR_RED}" stroke-width="1.5"`,
    }[item.kind];
    out.push(`<rect x="${px(x)}" y="${top + 2}" width="${SWATCH}" height="${SWATCH}" fill="${item.fill}" ${outline}/>`);
    if (item.kind === 'error')
      out.push(`<rect x="${px(x)}" y="${top + 2}" width="${SWATCH}" height="${SWATCH}" fill="url(#${HATCH_ID})"/>`);
    out.push(`<text class="legend-label" x="${px(x + SWATCH + 4)}" y="${top + 11}" fill="${INK}">${escapeXml(item.label)}</text>`);
  }
  out.push('</g>');
}

/** Tick labels above the axis line; grid lines run down through every row. */
function renderAxis(out: string[], f: Frame, axisMs: number, rowsBottom: number): void {
  const axisY = f.rowsY - 4;
  const maxTicks = Math.max(1, Math.floor((f.barX1 - f.barX0) / TICK_SPACING));
  out.push(`<g class="axis" font-size="11" fill="${MUTED_INK}">`);
  for (const t of axisTicks(axisMs, maxTicks)) {
    const x = f.barX0 + t * f.pxPerMs;
    const label = formatTick(t);
    const half = textWidth(label, { fontSize: 11 }) / 2;
    const anchor = x - half < f.barX0 ? 'start' : x + half > f.barX1 ? 'end' : 'middle';
    out.push(`<line x1="${px(x)}" y1="${axisY - 4}" x2="${px(x)}" y2="${rowsBottom}" stroke="${GRID}" stroke-width="1"/>`);
    out.push(`<text class="tick" x="${px(x)}" y="${axisY - 8}" text-anchor="${anchor}">${escapeXml(label)}</text>`);
  }
  out.push(`<line x1="${f.barX0}" y1="${axisY}" x2="${f.barX1}" y2="${axisY}" stroke="${MUTED_INK}" stroke-width="1"/>`);
  out.push('</g>');
}
