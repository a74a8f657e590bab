export * from './queue.backend';
export * from './job-consumer';
export * from './ingest.queue';
export * from './export-body';
export * from './cost-reports.queue';
