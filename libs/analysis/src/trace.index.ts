import type { AnalysisSpan } from './analysis.model';
import { toNumber } from './intrinsics';

/**
 * A trace's spans arranged once for every detector: millisecond offsets converted from bigint a
 * single time, sorted by start, parents resolved and siblings grouped. Spans are referred to by
 * their position ("node") in `spans`.
 */
export interface TraceIndex {
  /**
   * The input without repeated span ids (the first occurrence wins; ingest dedupes, this is a
   * guard), sorted by start, then end, then span id.
   */
  readonly spans: readonly AnalysisSpan[];
  /** Offsets from the trace's earliest start, in ms. An end before its start is read as the start. */
  readonly startMs: readonly number[];
  readonly endMs: readonly number[];
  /** Position of each span id in `spans`. */
  readonly position: ReadonlyMap<string, number>;
  /**
   * Spans whose parent is '' or absent from the trace (orphans) or the span itself: each is the root
   * of its own tree. A cycle among present spans (impossible from a valid exporter) leaves its spans
   * unreachable from any root, so no walk can loop.
   */
  readonly roots: readonly number[];
  /** Children of each span, in `spans` order. */
  readonly children: readonly (readonly number[])[];
  /**
   * Siblings by the parentSpanId they name, in `spans` order. Orphans naming the same absent
   * parent are siblings too, and true roots are siblings under ''.
   */
  readonly siblings: ReadonlyMap<string, readonly number[]>;
  /** Max end − min start. */
  readonly wallMs: number;
}

const NO_CHILDREN: readonly number[] = Object.freeze([]);
const NS_PER_MS = 1e6;

export function durationMs(index: TraceIndex, node: number): number {
  return index.endMs[node] - index.startMs[node];
}

export function buildTraceIndex(input: readonly AnalysisSpan[]): TraceIndex {
  // Positions in arrival order first (to dedupe), overwritten with sorted positions below: one Map.
  const position = new Map<string, number>();
  const arrived: AnalysisSpan[] = [];
  for (const span of input) {
    if (position.has(span.spanId)) continue;
    position.set(span.spanId, arrived.length);
    arrived.push(span);
  }
  let origin = arrived.length > 0 ? arrived[0].startNs : 0n;
  for (const span of arrived) if (span.startNs < origin) origin = span.startNs;
  const arrivedStart = arrived.map((span) => toNumber(span.startNs - origin) / NS_PER_MS);
  const arrivedEnd = arrived.map((span, at) => (span.endNs > span.startNs ? toNumber(span.endNs - origin) / NS_PER_MS : arrivedStart[at]));

  // One sort puts the whole trace in (start, end, span id) order: every sibling group is then built
  // sorted, and every result (Map orders and float sums included) is the same whatever order the
  // spans arrived in.
  const order = arrived.map((_, at) => at);
  order.sort(
    (a, b) => arrivedStart[a] - arrivedStart[b] || arrivedEnd[a] - arrivedEnd[b] || (arrived[a].spanId < arrived[b].spanId ? -1 : 1),
  );
  const count = order.length;
  const spans = order.map((at) => arrived[at]);
  const startMs = order.map((at) => arrivedStart[at]);
  const endMs = order.map((at) => arrivedEnd[at]);
  spans.forEach((span, node) => position.set(span.spanId, node));

  const roots: number[] = [];
  const groups = new Map<string, number[]>();
  let wallMs = 0;
  for (let node = 0; node < count; node++) {
    const span = spans[node];
    if (endMs[node] > wallMs) wallMs = endMs[node];
    const selfParented = span.parentSpanId === span.spanId;
    if (selfParented || span.parentSpanId === '' || !position.has(span.parentSpanId)) roots.push(node);
    const key = selfParented ? '' : span.parentSpanId;
    const group = groups.get(key);
    if (group) group.push(node);
    else groups.set(key, [node]);
  }

  const children: (readonly number[])[] = new Array(count);
  // Self-parented spans were filed under '', so a span never lists itself as a child; an empty span
  // id (rejected at ingest) must not adopt the roots.
  for (let node = 0; node < count; node++) children[node] = (spans[node].spanId && groups.get(spans[node].spanId)) || NO_CHILDREN;
  return { spans, startMs, endMs, position, roots, children, siblings: groups, wallMs };
}
