export * from './report.model';
export {
  DUE_WINDOWS_CAP,
  MAX_WINDOW_MS,
  MIN_WINDOW_MS,
  canonicalTimezone,
  dueWindows,
  fireTimes,
  parseWindow,
  reportWindow,
  validateCron,
  validateCronFrequency,
  MIN_SCHEDULE_INTERVAL_MS,
  validateTimezone,
  validateWindow,
  type ReportSchedule,
  type ReportWindow,
} from './schedule';
export { renderReportCsv } from './render.csv';
export { renderReportHtml } from './render.html';
export { formatUsd } from './render.format';
export {
  DEFAULT_WEBHOOK_TOLERANCE_SECONDS,
  PRIVATE_TARGETS_REFUSED,
  WEBHOOK_SIGNATURE_HEADER,
  WEBHOOK_TIMESTAMP_HEADER,
  signWebhook,
  verifyWebhookSignature,
  webhookUrlProblem,
} from './webhook';
export { ipIsPrivate } from './ip-address';
