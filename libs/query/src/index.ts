export * from './analytics.repository';
export * from './query.values';
export * from './scoped-clickhouse';
export * from './trace-filter';
export * from './trace.repository';
export * from './stats.repository';
export * from './feedback.repository';
export * from './report.repository';
