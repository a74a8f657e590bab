export * from './credentials';
export * from './infrastructure';
export * from './logger';
export * from './metrics';
export * from './readiness';
export * from './shutdown';
export * from './run-role';
