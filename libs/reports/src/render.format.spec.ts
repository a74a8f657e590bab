import {
  feedbackListText,
  formatChange,
  formatCount,
  formatDuration,
  formatLocalTime,
  formatUsd,
  formatWindowLength,
  keysLabel,
} from './render.format';

describe('formatUsd', () => {
  it.each([
    [1234.56, '$1,234.56'],
    [12_345_678.9, '$12,345,678.90'],
    [1, '$1.00'],
    [0.5, '$0.50'],
    [0.4213, '$0.4213'],
    [0.012345, '$0.0123'],
    [0.0042, '$0.0042'],
    [0.00042, '$0.00042'],
    [0.000123, '$0.00012'],
    [0.0000015, '$0.000002'],
    [0.0000001, '<$0.000001'],
    [0, '$0.00'],
    [-2.5, '-$2.50'],
    [Number.NaN, '–'],
  ])('%p → %p', (value, text) => {
    expect(formatUsd(value)).toBe(text);
  });
});

describe('formatChange', () => {
  it.each([
    [0.25, 'up', '▲ 25%'],
    [-0.125, 'down', '▼ 12.5%'],
    [12.5, 'up', '▲ 1,250%'],
    [0, 'flat', '±0%'],
    [null, 'none', 'n/a'],
  ])('%p → %s %p', (change, direction, text) => {
    expect(formatChange(change)).toEqual({ direction, text });
  });
});

describe('other formats', () => {
  it('formats counts, durations and window lengths', () => {
    expect(formatCount(1_234_567)).toBe('1,234,567');
    expect([640, 18_420, 245_310, 60_000].map(formatDuration)).toEqual(['640 ms', '18.4 s', '4 min 05 s', '1 min 00 s']);
    expect([30 * 60_000, 86_400_000, 36 * 3_600_000, 7 * 86_400_000].map(formatWindowLength)).toEqual([
      '30 minutes',
      '24 hours',
      '36 hours',
      '7 days',
    ]);
  });

  it('shows local wall-clock time in the report zone, across a DST change', () => {
    expect(formatLocalTime('2025-03-30T00:30:00Z', 'Europe/Lisbon')).toBe('2025-03-30 00:30');
    expect(formatLocalTime('2025-03-30T01:30:00Z', 'Europe/Lisbon')).toBe('2025-03-30 02:30');
    expect(formatLocalTime('2025-06-01T04:00:00Z', 'America/New_York')).toBe('2025-06-01 00:00');
    expect(formatLocalTime('2025-06-01T04:00:00Z', 'Not/AZone')).toBe('2025-06-01 04:00');
    expect(formatLocalTime('not a date', 'UTC')).toBe('not a date');
  });

  it('joins keys and feedback', () => {
    expect(keysLabel(['gpt-4o', '', '2025-06-01'])).toBe('gpt-4o · (none) · 2025-06-01');
    expect(
      feedbackListText([
        { name: 'helpful', count: 3, avg: 2 / 3 },
        { name: 'label', count: 2, avg: null },
      ]),
    ).toBe('helpful=0.6667 (3); label (2)');
  });
});
