import { randomUUID } from 'node:crypto';
import type { DecodeResult } from '@spanforge/otlp';
import { packExportBody, type ExportJob } from '@spanforge/queue';

/** The queue job the gateway would make of an export body it decoded (for suites that drive the worker's writer directly). */
export function exportJob(tenantId: string, projectId: string, format: ExportJob['format'], body: Buffer, result: DecodeResult): ExportJob {
  return {
    v: 1,
    tenantId,
    projectId,
    format,
    ...packExportBody(body),
    receivedAt: Date.now(),
    exportId: randomUUID(),
    receivedSpans: result.received,
    acceptedSpans: result.spans.length,
    bytes: body.length,
  };
}
