// Jest's own order (tests that failed last time first, then the slowest of the last run), with the
// tests whose work grows with what the data directory holds moved to the front. A jest worker is
// one process and chDB binds one data directory per process, so every test file of a worker stores
// into the same directory. The ClickHouse migration tests run their rebuilds and back-fills over
// all of it; erasure and retention delete rows and rewrite whole partitions (every test's data is
// in the current month's); the query tests read whole projects' tables. Run first, they take
// seconds to a minute; run late in CI they took up to 5 minutes each (query.int-spec: 38 s third,
// 118 s thirteenth).
import Sequencer from '@jest/test-sequencer';

const GROWS_WITH_DATA = [
  /(\.migration|[/\\]migrator)\.int-spec\.ts$/,
  /[/\\]erasure\.int-spec\.ts$/,
  /[/\\]retention\.int-spec\.ts$/,
  /[/\\]query\.int-spec\.ts$/,
];

/** Where a test goes: its pattern's place in GROWS_WITH_DATA, or after all of them. */
const rank = (path) => {
  const index = GROWS_WITH_DATA.findIndex((pattern) => pattern.test(path));
  return index === -1 ? GROWS_WITH_DATA.length : index;
};

class DataSensitiveFirst extends Sequencer {
  sort(tests) {
    // A stable sort: within a rank, jest's order.
    return super
      .sort(tests)
      .map((test, at) => ({ test, at }))
      .sort((a, b) => rank(a.test.path) - rank(b.test.path) || a.at - b.at)
      .map(({ test }) => test);
  }
}

export default DataSensitiveFirst;
