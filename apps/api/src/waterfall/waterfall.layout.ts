/**
 * Which rows the waterfall draws, in which order: the span tree depth-first (children by start
 * time), and, past `maxRows`, the collapse into "… N more spans under X" rows. Pure arithmetic;
 * the SVG text is waterfall.svg.ts's business.
 */
import { SPAN_TYPES, WaterfallSpan, WaterfallSpanType } from './waterfall.model';

export interface SpanRow {
  kind: 'span';
  span: WaterfallSpan;
  depth: number;
  critical: boolean;
}

/** Spans hidden by the collapse that share their nearest drawn ancestor (`parent`, or none: top level). */
export interface SummaryRow {
  kind: 'summary';
  depth: number;
  parent: WaterfallSpan | null;
  hiddenCount: number;
  /** Hidden spans per type, most frequent first (ties in SPAN_TYPES order). */
  byType: Array<[WaterfallSpanType, number]>;
  /** Hidden spans whose status is ERROR, so a collapse never hides that something failed. */
  errorCount: number;
}

export type WaterfallRow = SpanRow | SummaryRow;

export interface WaterfallLayout {
  rows: WaterfallRow[];
  /** Spans drawn after cleaning (those with a non-finite start are left out). */
  spanCount: number;
  hiddenCount: number;
  /** Trace wall time: min start and max end over every span, hidden ones included. */
  startMs: number;
  endMs: number;
  typesPresent: WaterfallSpanType[];
  hasError: boolean;
}

/** Spans in depth-first order; `parent`, `depth` and `size` (subtree size, itself included) are indexed by position. */
interface TreeOrder {
  spans: WaterfallSpan[];
  parent: Int32Array;
  depth: Int32Array;
  size: Int32Array;
  positionOf: Map<string, number>;
}

const KNOWN_TYPES: ReadonlySet<string> = new Set(SPAN_TYPES);

export function layoutWaterfall(rawSpans: readonly WaterfallSpan[], criticalPath: readonly string[], maxRows: number): WaterfallLayout {
  const spans = rawSpans.filter((s) => Number.isFinite(s.startMs)).map(cleanSpan);
  const tree = orderTree(spans);
  const critical = new Set<number>();
  for (const id of criticalPath) {
    const pos = tree.positionOf.get(id);
    if (pos !== undefined) critical.add(pos);
  }
  const visible = chooseVisible(tree, critical, maxRows);
  const rows = buildRows(tree, visible, critical);
  let startMs = Infinity;
  let endMs = -Infinity;
  const types = new Set<WaterfallSpanType>();
  for (const s of spans) {
    startMs = Math.min(startMs, s.startMs);
    endMs = Math.max(endMs, s.endMs);
    types.add(s.type);
  }
  const drawn = rows.reduce((n, r) => n + (r.kind === 'span' ? 1 : 0), 0);
  return {
    rows,
    spanCount: spans.length,
    hiddenCount: spans.length - drawn,
    startMs: spans.length > 0 ? startMs : 0,
    endMs: spans.length > 0 ? endMs : 0,
    typesPresent: SPAN_TYPES.filter((t) => types.has(t)),
    hasError: spans.some((s) => s.status === 'ERROR'),
  };
}

/** An end before the start (or missing) draws as a zero-duration span; an unknown type as OTHER. */
function cleanSpan(s: WaterfallSpan): WaterfallSpan {
  const endOk = Number.isFinite(s.endMs) && s.endMs >= s.startMs;
  const typeOk = KNOWN_TYPES.has(s.type);
  if (endOk && typeOk) return s;
  return { ...s, endMs: endOk ? s.endMs : s.startMs, type: typeOk ? s.type : 'OTHER' };
}

function byStart(spans: readonly WaterfallSpan[]) {
  return (a: number, b: number): number => {
    const d = spans[a].startMs - spans[b].startMs;
    if (d !== 0) return d;
    if (spans[a].spanId !== spans[b].spanId) return spans[a].spanId < spans[b].spanId ? -1 : 1;
    return a - b;
  };
}

/**
 * Depth-first order, iterative so a 2,000-deep chain cannot overflow the stack. A span whose
 * parent is missing (an orphan) starts a tree at depth 0; so does a span caught in a parent cycle,
 * which no root reaches. With duplicate ids the first span owns the id.
 */
function orderTree(spans: readonly WaterfallSpan[]): TreeOrder {
  const n = spans.length;
  const indexOf = new Map<string, number>();
  spans.forEach((s, i) => {
    if (!indexOf.has(s.spanId)) indexOf.set(s.spanId, i);
  });
  const children: number[][] = spans.map(() => []);
  const starts: number[] = [];
  spans.forEach((s, i) => {
    const p = s.parentSpanId === null ? undefined : indexOf.get(s.parentSpanId);
    if (p === undefined || p === i) starts.push(i);
    else children[p].push(i);
  });
  const cmp = byStart(spans);
  for (const list of children) if (list.length > 1) list.sort(cmp);
  // Cycle members come after the true roots, in start order.
  const fallback = spans.map((_, i) => i).sort(cmp);
  starts.sort(cmp);

  const order: number[] = [];
  const parent = new Int32Array(n).fill(-1);
  const depth = new Int32Array(n);
  const posOfIndex = new Int32Array(n).fill(-1);
  const visit = (start: number): void => {
    const stack: Array<[index: number, parentPos: number]> = [[start, -1]];
    while (stack.length > 0) {
      const [i, parentPos] = stack.pop() as [number, number];
      if (posOfIndex[i] >= 0) continue;
      const pos = order.length;
      posOfIndex[i] = pos;
      order.push(i);
      parent[pos] = parentPos;
      depth[pos] = parentPos < 0 ? 0 : depth[parentPos] + 1;
      const kids = children[i];
      for (let k = kids.length - 1; k >= 0; k--) if (posOfIndex[kids[k]] < 0) stack.push([kids[k], pos]);
    }
  };
  for (const i of starts) visit(i);
  for (const i of fallback) if (posOfIndex[i] < 0) visit(i);

  const size = new Int32Array(n).fill(1);
  for (let pos = n - 1; pos > 0; pos--) if (parent[pos] >= 0) size[parent[pos]] += size[pos];
  const positionOf = new Map<string, number>();
  for (const [id, i] of indexOf) positionOf.set(id, posOfIndex[i]);
  return { spans: order.map((i) => spans[i]), parent, depth, size, positionOf };
}

/**
 * Collapse rule: with more spans than `maxRows`, draw the critical-path spans and their
 * ancestors (never hidden, even past the budget), then the first spans in tree order while
 * span rows plus summary rows fit in `maxRows`. Every hidden span is counted in exactly one
 * summary row: the one of its nearest drawn ancestor.
 */
function chooseVisible(tree: TreeOrder, critical: ReadonlySet<number>, maxRows: number): Uint8Array {
  const n = tree.spans.length;
  const visible = new Uint8Array(n);
  if (n <= maxRows) return visible.fill(1);
  for (const pos of critical) {
    for (let p = pos; p >= 0 && visible[p] === 0; p = tree.parent[p]) visible[p] = 1;
  }
  // hidden[g + 1]: hidden spans whose nearest drawn ancestor is g (slot 0: top level).
  const hidden = new Int32Array(n + 1);
  const nearest = nearestVisibleAncestors(tree, visible);
  let rows = 0;
  for (let pos = 0; pos < n; pos++) {
    if (visible[pos] === 1) rows++;
    else if (hidden[nearest[pos] + 1]++ === 0) rows++;
  }
  // Preorder: a span's parent comes before it, so when the prefix reaches a span its parent is
  // drawn; a span off the kept set has no kept descendant, so its whole subtree moves from the
  // parent's summary to its own.
  for (let pos = 0; pos < n; pos++) {
    if (visible[pos] === 1) continue;
    const slot = tree.parent[pos] + 1;
    const left = hidden[slot] - tree.size[pos];
    const delta = 1 - (left === 0 ? 1 : 0) + (tree.size[pos] > 1 ? 1 : 0);
    if (rows + delta > maxRows) break;
    visible[pos] = 1;
    hidden[slot] = left;
    hidden[pos + 1] = tree.size[pos] - 1;
    rows += delta;
  }
  return visible;
}

/** For each position, the nearest drawn ancestor's position (-1: none). */
function nearestVisibleAncestors(tree: TreeOrder, visible: Uint8Array): Int32Array {
  const nearest = new Int32Array(tree.spans.length);
  for (let pos = 0; pos < tree.spans.length; pos++) {
    const p = tree.parent[pos];
    nearest[pos] = p < 0 ? -1 : visible[p] === 1 ? p : nearest[p];
  }
  return nearest;
}

/** Span rows in tree order; a summary row closes each drawn span's subtree that hides spans. */
function buildRows(tree: TreeOrder, visible: Uint8Array, critical: ReadonlySet<number>): WaterfallRow[] {
  const nearest = nearestVisibleAncestors(tree, visible);
  const groups = new Map<number, HiddenGroup>();
  const rows: WaterfallRow[] = [];
  const open: number[] = [];
  const close = (g: number): void => {
    const group = groups.get(g);
    if (group === undefined) return;
    rows.push(summaryRow(g < 0 ? null : tree.spans[g], g < 0 ? 0 : tree.depth[g] + 1, group));
  };
  for (let pos = 0; pos < tree.spans.length; pos++) {
    if (visible[pos] === 0) {
      const g = nearest[pos];
      let group = groups.get(g);
      if (group === undefined) groups.set(g, (group = { counts: new Map(), errors: 0 }));
      const { type, status } = tree.spans[pos];
      group.counts.set(type, (group.counts.get(type) ?? 0) + 1);
      if (status === 'ERROR') group.errors++;
      continue;
    }
    while (open.length > 0 && tree.depth[open[open.length - 1]] >= tree.depth[pos]) close(open.pop() as number);
    open.push(pos);
    rows.push({ kind: 'span', span: tree.spans[pos], depth: tree.depth[pos], critical: critical.has(pos) });
  }
  while (open.length > 0) close(open.pop() as number);
  close(-1);
  return rows;
}

interface HiddenGroup {
  counts: Map<WaterfallSpanType, number>;
  errors: number;
}

function summaryRow(parent: WaterfallSpan | null, depth: number, { counts, errors }: HiddenGroup): SummaryRow {
  const byType = SPAN_TYPES.filter((t) => counts.has(t)).map((t): [WaterfallSpanType, number] => [t, counts.get(t) as number]);
  byType.sort((a, b) => b[1] - a[1] || SPAN_TYPES.indexOf(a[0]) - SPAN_TYPES.indexOf(b[0]));
  const hiddenCount = byType.reduce((n, [, c]) => n + c, 0);
  return { kind: 'summary', depth, parent, hiddenCount, byType, errorCount: errors };
}
