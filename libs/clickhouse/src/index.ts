export * from './clickhouse.client';
export * from './cluster-ddl';
export * from './migrator';
export * from './trace-figures.sql';
export * from './clickhouse-errors';
export * from './fair-scheduler';
export * from './span-metrics.sql';
export * from './statements';
