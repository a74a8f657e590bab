export * from './queue.backend';
