export * from './otlp.model';
