/** Input and options of the SVG waterfall (`renderWaterfall`). Span types are the GraphQL SpanType values (docs/api.md). */
import type { SpanType } from '@spanforge/semconv';

/** Every span type (the GraphQL enum's order), which is the order the legend and the summary rows list them. */
export { SPAN_TYPES } from '@spanforge/semconv';

export type WaterfallSpanType = SpanType;

export type WaterfallStatus = 'UNSET' | 'OK' | 'ERROR';

export interface WaterfallSpan {
  spanId: string;
  parentSpanId: string | null;
  name: string;
  type: WaterfallSpanType;
  /** Epoch milliseconds (any common origin works: only differences are drawn). */
  startMs: number;
  endMs: number;
  status: WaterfallStatus;
}

export interface WaterfallInput {
  traceId: string;
  spans: WaterfallSpan[];
  /** Span ids of the critical path, root first (libs/analysis). Ids not among `spans` are ignored. */
  criticalPath: string[];
}

export interface WaterfallOptions {
  /** Total SVG width in px; default 1200, at least 480. */
  width?: number;
  /** Most rows drawn (span rows plus "… more spans" rows); default 2000, at least 1. */
  maxRows?: number;
}
