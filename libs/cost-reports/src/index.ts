export * from './cost-report.builder';
export * from './cost-report.service';
export * from './schedule.repository';
export * from './webhook.delivery';
