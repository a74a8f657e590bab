import type { AnalysisSpan, LoopReason, LoopReport } from './analysis.model';
import { resolveThresholds, type AnalysisOptions, type AnalysisThresholds } from './analysis.options';
import { pathRoot } from './critical-path.analysis';
import { maxWordDice, readToolArguments, wordDice, wordProfile } from './tool-arguments.normaliser';
import { buildTraceIndex, type TraceIndex } from './trace.index';

/**
 * A looping agent (a common cause of a p99 far above the p50) shows two ways: the same tool called
 * again and again with (near-)identical arguments, or far more reasoning iterations than the
 * project usually needs.
 *
 * * A tool call is a TOOL span or any span with a `toolName`; the tool is `toolName`, else the span
 *   name. Calls whose arguments were not captured ('' or absent) are skipped: without them, three
 *   calls of one tool are just three calls.
 * * Arguments are normalised (`readToolArguments`: keys sorted, whitespace collapsed), then grouped:
 *   equal canonical texts join one group; otherwise a call joins the first of the tool's 16 most
 *   recent groups whose first call's value words have Dice ≥ `argumentSimilarity` (0.9, `wordDice`:
 *   case and one word in ten may differ, an id may not). A loop repeats a recent call, and the bound
 *   keeps a trace with thousands of distinct calls of one tool linear.
 * * Iterations are "far over" the median at ≥ `iterationsFactor` × median and ≥ median +
 *   `iterationsMargin` (3× and +5: a median of 2 flags 7, a median of 10 flags 30).
 * Known false positive: paging through the results of a long query (ten words or more), where the
 * page number is the one word that differs.
 */
export function loopSuspected(spans: readonly AnalysisSpan[], options?: AnalysisOptions): LoopReport {
  return loopOf(buildTraceIndex(spans), options);
}

const RECENT_GROUPS_COMPARED = 16;

interface ArgumentGroup {
  profile: number[];
  nodes: number[];
  identical: boolean;
}

export function loopOf(index: TraceIndex, options?: AnalysisOptions): LoopReport {
  const thresholds = resolveThresholds(options);
  const reasons: LoopReason[] = [];
  for (const [toolName, calls] of toolCalls(index)) {
    for (const group of groupByArguments(index, calls, thresholds.argumentSimilarity)) {
      if (group.nodes.length < thresholds.loopMinCalls) continue;
      const spanIds = group.nodes.map((node) => index.spans[node].spanId);
      reasons.push({ kind: 'REPEATED_TOOL_CALL', toolName, calls: group.nodes.length, identical: group.identical, spanIds });
    }
  }
  const iterations = iterationsReason(index, options, thresholds);
  if (iterations) reasons.push(iterations);
  return { suspected: reasons.length > 0, reasons };
}

/** Tool calls with captured arguments, by tool, each list in start order (the index's); tools in order of first call. */
function toolCalls(index: TraceIndex): Map<string, number[]> {
  const byTool = new Map<string, number[]>();
  for (let node = 0; node < index.spans.length; node++) {
    const span = index.spans[node];
    if ((span.type !== 'TOOL' && !span.toolName) || !span.toolArguments) continue;
    const tool = span.toolName || span.name;
    const calls = byTool.get(tool);
    if (calls) calls.push(node);
    else byTool.set(tool, [node]);
  }
  return byTool;
}

function groupByArguments(index: TraceIndex, calls: readonly number[], similarity: number): ArgumentGroup[] {
  const groups: ArgumentGroup[] = [];
  const byText = new Map<string, ArgumentGroup>();
  const dictionary = new Map<string, number>();
  for (const node of calls) {
    const { canonical, words } = readToolArguments(index.spans[node].toolArguments ?? '');
    let group = byText.get(canonical);
    if (!group) {
      const profile = wordProfile(words, dictionary);
      group = groups
        .slice(-RECENT_GROUPS_COMPARED)
        .find((candidate) => maxWordDice(candidate.profile, profile) >= similarity && wordDice(candidate.profile, profile) >= similarity);
      if (group) group.identical = false;
      else groups.push((group = { profile, nodes: [], identical: true }));
      byText.set(canonical, group);
    }
    group.nodes.push(node);
  }
  return groups;
}

function iterationsReason(index: TraceIndex, options: AnalysisOptions | undefined, thresholds: AnalysisThresholds): LoopReason | undefined {
  const iterations = options?.iterations;
  const median = options?.projectMedianIterations;
  if (iterations === undefined || median === undefined || !(median > 0)) return undefined;
  if (iterations < thresholds.iterationsFactor * median || iterations < median + thresholds.iterationsMargin) return undefined;
  const root = pathRoot(index);
  return { kind: 'ITERATIONS', iterations, projectMedianIterations: median, spanIds: root >= 0 ? [index.spans[root].spanId] : [] };
}
