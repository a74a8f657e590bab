import type { AnalysisSpan, CriticalPathStep } from './analysis.model';
import { buildTraceIndex, type TraceIndex } from './trace.index';
import { max, min } from './intrinsics';

/**
 * The critical path (the spans, root first, that set the trace's wall time), computed the way
 * Jaeger's trace view does: walk backwards from a span's end, step into the child that ended last
 * at or before the cursor, then move the cursor to that child's start and repeat with the children
 * that ended before it. Time between path children is the span's own (`selfMs`), so the steps'
 * `selfMs` sum to the root's duration.
 *
 * Decisions:
 * * Several roots (orphans, or spans that arrived without their root): the path goes through the
 *   root that ends last (a true root, parentSpanId '', wins a tie, then the earlier start). Other
 *   roots are off the path: their parent is unknown, so nothing says they held the trace up.
 * * A child sticking out of its parent (clock skew, fire-and-forget work) is clipped to the parent
 *   for the walk, as Jaeger does; a child entirely outside it, or of zero clipped length, is off the
 *   path. The step's own times stay unclipped.
 * * Iterative with an explicit stack: a 10,000-deep chain must not overflow the call stack.
 */
export function criticalPath(spans: readonly AnalysisSpan[]): CriticalPathStep[] {
  return criticalPathOf(buildTraceIndex(spans));
}

interface PathFrame {
  node: number;
  /** The span's interval clipped to its parent's clipped interval. */
  start: number;
  end: number;
  /** Walking backwards: path time before the cursor is still to be explained. */
  cursor: number;
  /** Children by end, latest first (ties: the earlier start, which covers more, first). */
  byEnd: number[];
  next: number;
  selfMs: number;
}

export function criticalPathOf(index: TraceIndex): CriticalPathStep[] {
  const root = pathRoot(index);
  if (root < 0) return [];
  // Frames finish children-latest-first, then the parent: reversing that post-order gives the
  // parent first and its children in time order.
  const finished: CriticalPathStep[] = [];
  const stack: PathFrame[] = [frame(index, root, index.startMs[root], index.endMs[root])];
  while (stack.length > 0) {
    const top = stack[stack.length - 1];
    const child = nextPathChild(index, top);
    if (child >= 0) {
      const childEnd = min(index.endMs[child], top.end);
      const childStart = max(index.startMs[child], top.start);
      top.selfMs += top.cursor - childEnd;
      top.cursor = childStart;
      stack.push(frame(index, child, childStart, childEnd));
      continue;
    }
    top.selfMs += top.cursor - top.start;
    finished.push(step(index, top));
    stack.pop();
  }
  return finished.reverse();
}

function frame(index: TraceIndex, node: number, start: number, end: number): PathFrame {
  const { startMs, endMs } = index;
  const byEnd = [...index.children[node]].sort((a, b) => endMs[b] - endMs[a] || startMs[a] - startMs[b]);
  return { node, start, end, cursor: end, byEnd, next: 0, selfMs: 0 };
}

/**
 * The last-ending child whose clipped end is at or before the cursor, or -1. Clipping to the parent
 * keeps the by-end order, and the cursor only moves back, so a child skipped once (it ran in
 * parallel with a path child) never qualifies later: one forward scan per span.
 */
function nextPathChild(index: TraceIndex, top: PathFrame): number {
  while (top.next < top.byEnd.length) {
    const child = top.byEnd[top.next++];
    const end = min(index.endMs[child], top.end);
    const start = max(index.startMs[child], top.start);
    if (end <= start) continue;
    if (end <= top.cursor) return child;
  }
  return -1;
}

function step(index: TraceIndex, top: PathFrame): CriticalPathStep {
  const span = index.spans[top.node];
  const startMs = index.startMs[top.node];
  const endMs = index.endMs[top.node];
  return { spanId: span.spanId, name: span.name, type: span.type, startMs, endMs, durationMs: endMs - startMs, selfMs: top.selfMs };
}

/** The root the critical path goes through, or -1 for an empty trace. */
export function pathRoot(index: TraceIndex): number {
  let best = -1;
  for (const root of index.roots) {
    if (best < 0 || outranks(index, root, best)) best = root;
  }
  return best;
}

function outranks(index: TraceIndex, a: number, b: number): boolean {
  if (index.endMs[a] !== index.endMs[b]) return index.endMs[a] > index.endMs[b];
  const aTrue = index.spans[a].parentSpanId === '';
  const bTrue = index.spans[b].parentSpanId === '';
  if (aTrue !== bTrue) return aTrue;
  return index.startMs[a] < index.startMs[b];
}
