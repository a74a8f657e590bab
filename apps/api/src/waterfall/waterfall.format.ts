/**
 * Text for the waterfall: XML escaping, durations, axis ticks, counts and truncation. Everything
 * here is locale-free (no toLocaleString, no Intl) so the same input renders the same bytes on
 * every machine.
 */

// XML 1.0 forbids these code points even when escaped; a span name from the wire may carry them.
const NOT_XML_CHAR =
  /[\u0000-\u0008\u000B\u000C\u000E-\u001F\uFFFE\uFFFF]|[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/g;
const XML_SPECIAL = /[&<>"']/g;
const ENTITY: Readonly<Record<string, string>> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&apos;' };

/** Safe in text content and in double- or single-quoted attributes. */
export function escapeXml(text: string): string {
  return text.replace(NOT_XML_CHAR, '\uFFFD').replace(XML_SPECIAL, (c) => ENTITY[c]);
}

/** "1,234,567" regardless of locale. */
export function formatCount(n: number): string {
  return String(n).replace(/\B(?=(\d{3})+(?!\d))/g, ',');
}

/** Coordinates rounded to 1/100 px: enough for any screen, and short. */
export function px(n: number): string {
  return String(Math.round(n * 100) / 100);
}

function trimZeros(fixed: string): string {
  return fixed.includes('.') ? fixed.replace(/\.?0+$/, '') : fixed;
}

function minutesAndSeconds(totalSeconds: number): string {
  if (totalSeconds >= 3600) {
    const h = Math.floor(totalSeconds / 3600);
    const m = Math.round((totalSeconds - h * 3600) / 60);
    return m === 0 ? `${h} h` : `${h} h ${m} m`;
  }
  const m = Math.floor(totalSeconds / 60);
  const s = totalSeconds - m * 60;
  return s === 0 ? `${m} m` : `${m} m ${s} s`;
}

/** A span's duration to three significant figures: "< 1 ms", "85 ms", "1.23 s", "12.5 s", "2 m 5 s". */
export function formatDuration(ms: number): string {
  if (ms <= 0) return '0 ms';
  if (ms < 1) return '< 1 ms';
  if (Math.round(ms) < 1000) return `${Math.round(ms)} ms`;
  const s = ms / 1000;
  if (s < 9.995) return `${trimZeros(s.toFixed(2))} s`;
  if (s < 59.95) return `${trimZeros(s.toFixed(1))} s`;
  return minutesAndSeconds(Math.round(s));
}

/** An axis tick, exact at tick values: "0 ms", "0.5 ms", "250 ms", "1.5 s", "2 m", "1 m 30 s". */
export function formatTick(ms: number): string {
  if (ms < 1000) return `${trimZeros(ms.toFixed(3))} ms`;
  if (ms < 60_000) return `${trimZeros((ms / 1000).toFixed(3))} s`;
  return minutesAndSeconds(Math.round(ms / 1000));
}

/**
 * Tick steps: 1/2/5 × 10^k ms up to 5 s; from there, steps that land on whole seconds, minutes
 * and hours (10 s, 20 s, 30 s, 1 m, 2 m, 5 m, …) so long traces read "2 m", not "1.67 m".
 */
const TICK_STEPS: readonly number[] = [
  ...[-3, -2, -1, 0, 1, 2, 3].flatMap((k) => [1, 2, 5].map((m) => m * 10 ** k)),
  10_000,
  20_000,
  30_000,
  60_000,
  120_000,
  300_000,
  600_000,
  1_200_000,
  1_800_000,
  ...[0, 1, 2, 3, 4].flatMap((k) => [1, 2, 5].map((m) => m * 3_600_000 * 10 ** k)),
];

/** Tick offsets from the trace start: the smallest step giving at most `maxTicks` intervals. */
export function axisTicks(durationMs: number, maxTicks: number): number[] {
  const span = Math.max(durationMs, 0.001);
  const step = TICK_STEPS.find((s) => span / s <= Math.max(1, maxTicks)) ?? TICK_STEPS[TICK_STEPS.length - 1];
  const ticks: number[] = [];
  // Tick i is i × step computed from integers, so 3 × 0.1 prints "0.3 ms", not "0.30000000000000004".
  for (let i = 0; i * step <= span * (1 + 1e-9); i++) ticks.push(Number((i * step).toPrecision(12)));
  return ticks;
}

/**
 * Advance widths in px of ASCII 32–126 at 12px, measured in headless Chromium whose system-ui is
 * DejaVu Sans: the widest of the usual sans fallbacks (SF Pro and Segoe UI run ~5–10% narrower),
 * so labels sized with it fit everywhere, at worst a few characters early.
 */
const ASCII_WIDTHS: readonly number[] = [
  3.8, 4.8, 5.5, 10.1, 7.6, 11.4, 9.4, 3.3, 4.7, 4.7, 6, 10.1, 3.8, 4.3, 3.8, 4, 7.6, 7.6, 7.6, 7.6, 7.6, 7.6, 7.6, 7.6, 7.6, 7.6, 4, 4,
  10.1, 10.1, 10.1, 6.4, 12, 8.5, 8.2, 8.4, 9.2, 7.6, 6.9, 9.3, 9, 3.5, 3.5, 7.9, 6.7, 10.4, 9, 9.4, 7.2, 9.4, 8.3, 7.6, 7.1, 8.8, 8.2,
  11.9, 8.2, 7.3, 8.2, 4.7, 4, 4.7, 10.1, 6, 6, 7.4, 7.6, 6.6, 7.6, 7.4, 4.1, 7.6, 7.6, 3.3, 3.3, 7, 3.3, 11.7, 7.6, 7.3, 7.6, 7.6, 4.7,
  6.3, 4.7, 7.6, 7.1, 9.8, 7.1, 7.1, 6.3, 7.6, 4, 7.6, 10.1,
];
/** Measured the same way: "…" 12 px, CJK 12 px, accented Latin 7.4 px; bold runs ~10% wider. */
const ELLIPSIS_WIDTH = 12;
const WIDE_WIDTH = 12;
const OTHER_WIDTH = 7.4;
const BOLD_FACTOR = 1.1;

function isWide(code: number): boolean {
  return (
    (code >= 0x2e80 && code <= 0xd7ff) ||
    (code >= 0xf900 && code <= 0xfaff) ||
    (code >= 0xfe30 && code <= 0xfe4f) ||
    (code >= 0xff00 && code <= 0xff60) ||
    (code >= 0xffe0 && code <= 0xffe6) ||
    code >= 0x1f000
  );
}

function charWidth(code: number): number {
  if (code >= 32 && code < 127) return ASCII_WIDTHS[code - 32];
  return isWide(code) ? WIDE_WIDTH : OTHER_WIDTH;
}

export interface TextStyle {
  fontSize?: number;
  bold?: boolean;
}

function scaleOf(style: TextStyle): number {
  return ((style.fontSize ?? 12) / 12) * (style.bold ? BOLD_FACTOR : 1);
}

/** Estimated rendered width in px (there is no DOM on the server; see ASCII_WIDTHS). */
export function textWidth(text: string, style: TextStyle = {}): number {
  let w = 0;
  for (const ch of text) w += charWidth(ch.codePointAt(0) as number);
  return w * scaleOf(style);
}

/** The longest prefix that fits `maxWidth` px, ending in "…" when cut (never splits a surrogate pair). */
export function truncate(text: string, maxWidth: number, style: TextStyle = {}): string {
  if (textWidth(text, style) <= maxWidth) return text;
  const budget = maxWidth / scaleOf(style) - ELLIPSIS_WIDTH;
  let used = 0;
  let end = 0;
  for (const ch of text) {
    used += charWidth(ch.codePointAt(0) as number);
    if (used > budget) break;
    end += ch.length;
  }
  return `${text.slice(0, end)}…`;
}
