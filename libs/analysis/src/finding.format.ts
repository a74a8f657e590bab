import type { TraceIndex } from './trace.index';

/** "420 ms" under a second, else "4.13 s": people read latency in those units. */
export function formatMs(ms: number): string {
  return ms < 1000 ? `${Math.round(ms)} ms` : `${(ms / 1000).toFixed(2)} s`;
}

export function formatShare(share: number): string {
  return `${Math.round(share * 100)}%`;
}

/** Where siblings sit: `under "agent"`, `under missing span 00f0…` for orphans, or the top for roots. */
export function underParent(index: TraceIndex, parentSpanId: string): string {
  if (parentSpanId === '') return 'at the top of the trace';
  const node = index.position.get(parentSpanId);
  return node === undefined ? `under missing span ${parentSpanId}` : `under "${index.spans[node].name}"`;
}

export function plural(count: number, word: string): string {
  return `${count} ${word}${count === 1 ? '' : 's'}`;
}
