export * from './batching.queue';
export * from './dead-letter.repository';
export * from './span.columns';
export * from './export-rows';
export * from './span.repository';
export * from './span.row';
export * from './span.writer';
export * from './span-log-events';
