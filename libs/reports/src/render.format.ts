import type { ReportFeedbackSummary } from './report.model';

/**
 * Human formatting shared by the renderers. Everything is pinned to the en-US locale and to the
 * report's own fields, never the machine's locale or clock, so a report renders byte-identically
 * on every worker.
 */

const numberFormats = new Map<string, Intl.NumberFormat>();

function numberFormat(minimumFractionDigits: number, maximumFractionDigits: number, useGrouping = true): Intl.NumberFormat {
  const key = `${minimumFractionDigits}:${maximumFractionDigits}:${useGrouping}`;
  let format = numberFormats.get(key);
  if (!format) {
    format = new Intl.NumberFormat('en-US', { minimumFractionDigits, maximumFractionDigits, useGrouping });
    numberFormats.set(key, format);
  }
  return format;
}

/** Below this a cost shows as "<$0.000001": six decimals is a millionth of a dollar, below any single token price. */
const SMALLEST_SHOWN_USD = 0.000_001;

/**
 * `$1,234.56` from one dollar up; cents and fractions of a dollar to at most 4 decimals
 * (`$0.4213`, `$0.50`); below a cent 2 significant digits, at most 6 decimals (`$0.00042`), because
 * per-call LLM costs live there and `$0.00` would hide them.
 */
export function formatUsd(value: number): string {
  if (!Number.isFinite(value)) return '–';
  const sign = value < 0 ? '-' : '';
  const abs = Math.abs(value);
  if (abs === 0) return '$0.00';
  if (abs >= 1) return `${sign}$${numberFormat(2, 2).format(abs)}`;
  if (abs >= 0.01) return `${sign}$${numberFormat(2, 4).format(abs)}`;
  if (abs < SMALLEST_SHOWN_USD) return `${sign}<$0.000001`;
  const decimals = Math.min(6, 1 - Math.floor(Math.log10(abs)));
  return `${sign}$${numberFormat(2, decimals).format(abs)}`;
}

/** Token and span counts: `1,234,567`. */
export function formatCount(value: number): string {
  return Number.isFinite(value) ? numberFormat(0, 0).format(value) : '–';
}

/** A relative change as an arrow and a percentage: `▲ 25%`, `▼ 12.5%`, `±0%`; null (previous was 0) as `n/a`. */
export function formatChange(change: number | null): { direction: 'up' | 'down' | 'flat' | 'none'; text: string } {
  if (change === null || !Number.isFinite(change)) return { direction: 'none', text: 'n/a' };
  if (change === 0) return { direction: 'flat', text: '±0%' };
  const percent = `${numberFormat(0, 1).format(Math.abs(change) * 100)}%`;
  return change > 0 ? { direction: 'up', text: `▲ ${percent}` } : { direction: 'down', text: `▼ ${percent}` };
}

/** `850 ms`, `12.3 s`, `4 min 05 s`. */
export function formatDuration(ms: number): string {
  if (!Number.isFinite(ms)) return '–';
  if (ms < 1000) return `${numberFormat(0, 0).format(ms)} ms`;
  if (ms < 60_000) return `${numberFormat(0, 1).format(ms / 1000)} s`;
  const seconds = Math.round(ms / 1000);
  return `${numberFormat(0, 0).format(Math.floor(seconds / 60))} min ${String(seconds % 60).padStart(2, '0')} s`;
}

/** A window's length in words: `30 minutes`, `24 hours`, `36 hours`, `7 days`. */
export function formatWindowLength(ms: number): string {
  if (!Number.isFinite(ms) || ms <= 0) return 'window';
  const plural = (count: number, unit: string) => `${count} ${unit}${count === 1 ? '' : 's'}`;
  const minutes = Math.round(ms / 60_000);
  if (minutes % 60 !== 0) return plural(minutes, 'minute');
  const hours = minutes / 60;
  // "7 days" reads better than "168 hours"; below three days people count hours ("48 hours").
  if (hours % 24 !== 0 || hours < 72) return plural(hours, 'hour');
  return plural(hours / 24, 'day');
}

/** A feedback average: up to 4 decimals, no grouping (it sits inside "name=avg (n)"). */
export function formatAverage(avg: number): string {
  return numberFormat(0, 4, false).format(avg);
}

/** One score summary as "name=avg (n)", or "name (n)" for scores without an average (categorical, text). */
export function feedbackText(feedback: ReportFeedbackSummary): string {
  const avg = feedback.avg === null || !Number.isFinite(feedback.avg) ? '' : `=${formatAverage(feedback.avg)}`;
  return `${feedback.name}${avg} (${feedback.count})`;
}

export function feedbackListText(feedback: ReportFeedbackSummary[]): string {
  return feedback.map(feedbackText).join('; ');
}

const localFormats = new Map<string, Intl.DateTimeFormat>();

/** An ISO instant as "YYYY-MM-DD HH:mm" wall-clock time in the zone; the ISO text itself if it is not a date. */
export function formatLocalTime(iso: string, timeZone: string): string {
  const instant = new Date(iso);
  if (Number.isNaN(instant.getTime())) return iso;
  let format = localFormats.get(timeZone);
  if (!format) {
    try {
      format = new Intl.DateTimeFormat('en-CA', {
        timeZone,
        year: 'numeric',
        month: '2-digit',
        day: '2-digit',
        hour: '2-digit',
        minute: '2-digit',
        hourCycle: 'h23',
      });
    } catch {
      // A stored zone the tz database no longer knows: show UTC rather than fail the whole page.
      return formatLocalTime(iso, 'UTC');
    }
    localFormats.set(timeZone, format);
  }
  const parts = Object.fromEntries(format.formatToParts(instant).map((part) => [part.type, part.value]));
  return `${parts.year}-${parts.month}-${parts.day} ${parts.hour}:${parts.minute}`;
}

/** Breakdown keys as one label: `gpt-4o · 2025-06-01`; an empty key (no model, no session) as "(none)". */
export function keysLabel(keys: string[]): string {
  return keys.map((key) => (key === '' ? '(none)' : key)).join(' · ');
}
