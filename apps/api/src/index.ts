export * from './api.module';
export * from './api.server';
/** The waterfall's colours, for tests that look at the picture. */
export { CRITICAL_BAND, ERROR_RED, TYPE_COLOUR } from './waterfall/waterfall.palette';
