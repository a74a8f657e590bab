/**
 * Bar colours per span type. The GenAI types a reader looks for first (RUN, AGENT, LLM, TOOL,
 * RETRIEVAL, EMBEDDING) take Okabe–Ito colours, which stay distinct under the common colour
 * vision deficiencies; the rest take Paul Tol's "muted" scheme, and plumbing (HTTP, DB, OTHER)
 * recedes into sand and greys. Thirteen hues cannot all be told apart by every reader, so each
 * row also names its span and the tooltip names its type. Error red is used by no type.
 */
import { WaterfallSpanType } from './waterfall.model';

export const TYPE_COLOUR: Readonly<Record<WaterfallSpanType, string>> = {
  RUN: '#0072B2', // Okabe–Ito blue
  AGENT: '#CC79A7', // Okabe–Ito reddish purple
  LLM: '#E69F00', // Okabe–Ito orange
  TOOL: '#009E73', // Okabe–Ito bluish green
  RETRIEVAL: '#56B4E9', // Okabe–Ito sky blue
  EMBEDDING: '#F0E442', // Okabe–Ito yellow
  RERANK: '#44AA99', // Tol teal
  GUARDRAIL: '#882255', // Tol wine
  EVALUATION: '#999933', // Tol olive
  CHAIN: '#332288', // Tol indigo
  HTTP: '#888888',
  DB: '#DDCC77', // Tol sand
  OTHER: '#CCCCCC',
};

export const ERROR_RED = '#D00000';
export const CRITICAL_INK = '#111111';
/** Behind critical-path rows, so the path reads as one band down the chart. */
export const CRITICAL_BAND = '#FFF6D9';
export const ZEBRA = '#F6F7F9';
export const GRID = '#E3E5E8';
export const INK = '#1F2328';
export const MUTED_INK = '#59636E';

/** Text drawn on top of a bar: white on dark fills, ink on light ones (WCAG relative luminance). */
export function inkOn(fill: string): string {
  const channel = (hex: string): number => {
    const c = parseInt(hex, 16) / 255;
    return c <= 0.03928 ? c / 12.92 : ((c + 0.055) / 1.055) ** 2.4;
  };
  const l = 0.2126 * channel(fill.slice(1, 3)) + 0.7152 * channel(fill.slice(3, 5)) + 0.0722 * channel(fill.slice(5, 7));
  return l < 0.3 ? '#FFFFFF' : INK;
}
