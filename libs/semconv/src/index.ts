export * from './semconv.model';
