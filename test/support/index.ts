export * from './graphql';
export * from './processes';
export * from './services';
