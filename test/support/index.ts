export * from './graphql';
export * from './processes';
export * from './services';
export * from './otel';
export * from './embedded-query';
