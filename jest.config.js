// Three suites: unit (pure, next to the code), integration (real embedded PostgreSQL, chDB and
// redis-server, started once per run by test/support/global-setup.ts) and e2e (real processes).
const { compilerOptions } = require('./tsconfig.base.json');

const swc = [
  '@swc/jest',
  {
    jsc: {
      parser: { syntax: 'typescript', decorators: true },
      transform: { legacyDecorator: true, decoratorMetadata: true },
      target: 'es2023',
      keepClassNames: true,
    },
    module: { type: 'commonjs' },
  },
];

const moduleNameMapper = Object.fromEntries(
  Object.entries(compilerOptions.paths).map(([alias, [target]]) => [`^${alias}$`, `<rootDir>/${target}`]),
);

const common = { transform: { '^.+\\.ts$': swc }, moduleNameMapper, testEnvironment: 'node', rootDir: __dirname };

module.exports = {
  // Integration and end-to-end tests start real services; per-project testTimeout is not honoured by jest.
  testTimeout: 60_000,
  // Jest's order, with the tests whose work grows with the stored data first (test/support/test-sequencer.mjs).
  testSequencer: '<rootDir>/test/support/test-sequencer.mjs',
  projects: [
    { ...common, displayName: 'unit', testMatch: ['<rootDir>/{apps,libs}/**/*.spec.ts'] },
    {
      ...common,
      displayName: 'integration',
      testMatch: [
        '<rootDir>/{apps,libs}/**/*.int-spec.ts',
        '<rootDir>/test/integration/**/*.int-spec.ts',
        '<rootDir>/test/security/**/*.int-spec.ts',
      ],
      globalSetup: '<rootDir>/test/support/global-setup.ts',
      globalTeardown: '<rootDir>/test/support/global-teardown.ts',
    },
    {
      ...common,
      displayName: 'e2e',
      // End-to-end tests start real server processes on their own embedded services.
      testMatch: ['<rootDir>/test/e2e/**/*.e2e-spec.ts'],
    },
  ],
};
