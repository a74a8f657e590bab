export * from './feedback-token';
export * from './feedback.model';
export * from './feedback.repository';
export * from './feedback.service';
export * from './feedback.validation';
export * from './feedback.writer';
