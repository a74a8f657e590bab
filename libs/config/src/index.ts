export * from './config';
export * from './paths';
