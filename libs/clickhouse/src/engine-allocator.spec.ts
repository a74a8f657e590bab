import { decayAskedFor, decayInStats, decayInWords } from './engine-allocator';

describe('decayAskedFor', () => {
  it('reads the decay from jemalloc options, the last valid one where several name it', () => {
    expect(decayAskedFor('dirty_decay_ms:250')).toBe(250);
    expect(decayAskedFor('narenas:2,dirty_decay_ms:1000,muzzy_decay_ms:0')).toBe(1000);
    expect(decayAskedFor('dirty_decay_ms:0,dirty_decay_ms:-1')).toBe(-1);
  });

  it('reads the value as a C integer, as jemalloc does', () => {
    expect(decayAskedFor('dirty_decay_ms: 250')).toBe(250);
    expect(decayAskedFor('dirty_decay_ms:0x3e8')).toBe(1000);
    expect(decayAskedFor('dirty_decay_ms:0250')).toBe(168);
    expect(decayAskedFor('dirty_decay_ms:+5')).toBe(5);
  });

  it('ignores an invalid value, keeping the one before it', () => {
    expect(decayAskedFor('dirty_decay_ms:100,dirty_decay_ms:-5')).toBe(100);
    expect(decayAskedFor('dirty_decay_ms:100,dirty_decay_ms:250 ')).toBe(100);
    expect(decayAskedFor('dirty_decay_ms:100,dirty_decay_ms:soon')).toBe(100);
    expect(decayAskedFor('dirty_decay_ms:0x')).toBeUndefined();
  });

  it('stops at the first malformed option, as jemalloc does', () => {
    expect(decayAskedFor('narenas:2, dirty_decay_ms:1000')).toBeUndefined();
    expect(decayAskedFor('dirty_decay_ms:100,oops,dirty_decay_ms:250')).toBe(100);
    expect(decayAskedFor('dirty_decay_ms:100,')).toBe(100);
  });

  it('is undefined when the options name no decay (the engine keeps its own)', () => {
    expect(decayAskedFor('')).toBeUndefined();
    expect(decayAskedFor('muzzy_decay_ms:100')).toBeUndefined();
  });
});

describe('decayInStats', () => {
  // The lines around it as jemalloc 5.3's statistics print them.
  const stats = (decay: string) =>
    [
      '___ Begin jemalloc statistics ___',
      'Run-time option settings',
      '  opt.abort: false',
      `  opt.dirty_decay_ms: ${decay} (arenas.dirty_decay_ms: ${decay})`,
      '  opt.muzzy_decay_ms: 0 (arenas.muzzy_decay_ms: 0)',
    ].join('\n');

  it('reads the decay the allocator runs with', () => {
    expect(decayInStats(stats('250'))).toBe(250);
    expect(decayInStats(stats('-1'))).toBe(-1);
  });

  it('is null without the line (an engine built without jemalloc)', () => {
    expect(decayInStats('')).toBeNull();
    expect(decayInStats('  opt.muzzy_decay_ms: 0 (arenas.muzzy_decay_ms: 0)')).toBeNull();
  });
});

describe('decayInWords', () => {
  it('says when freed pages go back', () => {
    expect(decayInWords(250)).toBe('after 250 ms');
    expect(decayInWords(-1)).toBe('never');
    expect(decayInWords(null)).toBe('at a time its statistics do not name');
  });
});
