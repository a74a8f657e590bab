export * from './api.server';
