export * from './advisory-lock';
export * from './embedded-postgres';
export * from './free-port';
export * from './migrator';
export * from './pool';
