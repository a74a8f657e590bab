// Jest's own order (tests that failed last time first, then the slowest), with one change: the
// ClickHouse migration tests go first. A jest worker is one process and chDB binds one data
// directory per process, so every test file of a worker stores into the same directory, and a
// migration test runs its rebuilds and back-fills over whatever the files before it stored. Run
// first, over an almost empty directory, they take seconds; run last in CI they took 5 minutes.
import Sequencer from '@jest/test-sequencer';

const migrationTest = /(\.migration|[/\\]migrator)\.int-spec\.ts$/;

class MigrationsFirst extends Sequencer {
  sort(tests) {
    const sorted = super.sort(tests);
    return [...sorted.filter((t) => migrationTest.test(t.path)), ...sorted.filter((t) => !migrationTest.test(t.path))];
  }
}

export default MigrationsFirst;
