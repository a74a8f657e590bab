import { axisTicks, escapeXml, formatCount, formatDuration, formatTick, textWidth, truncate } from './waterfall.format';

describe('formatDuration', () => {
  it.each([
    [0, '0 ms'],
    [0.4, '< 1 ms'],
    [1, '1 ms'],
    [85, '85 ms'],
    [85.4, '85 ms'],
    [999.4, '999 ms'],
    [999.6, '1 s'],
    [1230, '1.23 s'],
    [1500, '1.5 s'],
    [12_345, '12.3 s'],
    [59_990, '1 m'],
    [125_000, '2 m 5 s'],
    [3_723_000, '1 h 2 m'],
  ])('%p ms reads %p', (ms, text) => {
    expect(formatDuration(ms)).toBe(text);
  });
});

describe('formatTick', () => {
  it.each([
    [0, '0 ms'],
    [0.5, '0.5 ms'],
    [250, '250 ms'],
    [1500, '1.5 s'],
    [20_000, '20 s'],
    [90_000, '1 m 30 s'],
    [120_000, '2 m'],
    [7_200_000, '2 h'],
  ])('%p ms reads %p', (ms, text) => {
    expect(formatTick(ms)).toBe(text);
  });
});

describe('axisTicks', () => {
  const niceSteps = new Set([1, 2, 5].flatMap((m) => [-3, -2, -1, 0, 1, 2, 3].map((k) => Number((m * 10 ** k).toPrecision(12)))));

  it.each([
    [0.7, 10],
    [1.9, 10],
    [2000, 8],
    [2000, 10],
    [9400, 9],
    [4321, 3],
  ])('for %p ms and at most %p intervals, ticks start at 0, step 1/2/5×10^k and stay within the trace', (duration, maxTicks) => {
    const ticks = axisTicks(duration, maxTicks);
    const step = ticks[1] - ticks[0];
    expect(ticks[0]).toBe(0);
    expect(niceSteps.has(Number(step.toPrecision(12)))).toBe(true);
    expect(ticks.length - 1).toBeLessThanOrEqual(maxTicks);
    expect(ticks[ticks.length - 1]).toBeLessThanOrEqual(duration);
    // The next tick would have been past the end: the axis covers the whole trace.
    expect(ticks[ticks.length - 1] + step).toBeGreaterThan(duration);
    ticks.forEach((t, i) => expect(t).toBeCloseTo(i * step, 9));
  });

  it('above 10 s steps land on whole minutes, so labels read "2 m", never "1.67 m"', () => {
    const ticks = axisTicks(10 * 60_000, 6);
    expect(ticks.map(formatTick)).toEqual(['0 ms', '2 m', '4 m', '6 m', '8 m', '10 m']);
  });

  it('prints exact decimals for sub-millisecond steps', () => {
    expect(axisTicks(0.35, 4).map(formatTick)).toEqual(['0 ms', '0.1 ms', '0.2 ms', '0.3 ms']);
  });
});

describe('escapeXml', () => {
  it('escapes the five XML specials', () => {
    expect(escapeXml(`<a href="x">Tom & Jerry's</a>`)).toBe('&lt;a href=&quot;x&quot;&gt;Tom &amp; Jerry&apos;s&lt;/a&gt;');
  });

  it('replaces characters XML cannot carry at all (controls, lone surrogates) and keeps emoji whole', () => {
    expect(escapeXml('a\u0000b\u001Fc\uD800d\u{1F600}')).toBe('a\uFFFDb\uFFFDc\uFFFDd\u{1F600}');
  });
});

describe('formatCount', () => {
  it('groups thousands with commas whatever the locale', () => {
    expect([0, 999, 1000, 8000, 1234567].map(formatCount)).toEqual(['0', '999', '1,000', '8,000', '1,234,567']);
  });
});

describe('truncate', () => {
  it('keeps text that fits and cuts what does not with an ellipsis, within the width', () => {
    const name = 'tool.call lookup_customer_profile_with_a_really_long_descriptive_name';
    expect(truncate('short', 200)).toBe('short');
    const cut = truncate(name, 150);
    expect(cut.endsWith('…')).toBe(true);
    expect(name.startsWith(cut.slice(0, -1))).toBe(true);
    expect(textWidth(cut)).toBeLessThanOrEqual(150);
    expect(textWidth(truncate(name, 150, { bold: true }), { bold: true })).toBeLessThanOrEqual(150);
  });

  it('never splits a surrogate pair', () => {
    const cut = truncate('\u{1F600}'.repeat(30), 50);
    expect(cut).toBe(`${'\u{1F600}'.repeat(Array.from(cut).length - 1)}…`);
  });
});
