export * from './queue.backend';
export * from './ingest.queue';
export * from './export-body';
export * from './cost-reports.queue';
