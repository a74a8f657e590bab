export * from './clickhouse.module';
export * from './cost-reports.module';
export * from './feedback.module';
export * from './postgres.module';
export * from './process.module';
export * from './queue.module';
export * from './tenancy.module';
export * from './tokens';
