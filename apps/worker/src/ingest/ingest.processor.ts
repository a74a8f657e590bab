import { UnrecoverableError, type Job } from 'bullmq';
import { OtlpDecodeError, decodeJsonExport, decodeProtobufExport, type DecodeResult } from '@spanforge/otlp';
import { IngestJobName, unpackExportBody, type AccountingJob, type ExportJob, type IngestJob } from '@spanforge/queue';
import { normalizeSpan } from '@spanforge/semconv';
import { BatchingQueue, toSpanRow, type AccountingRow, type SpanRow, type SpanWriter } from '@spanforge/ingest';
import type { ProjectPricing } from './project-pricing';

export interface IngestProcessorDeps {
  spans: SpanWriter;
  accounting: BatchingQueue<AccountingRow>;
  pricing: ProjectPricing;
}

/**
 * One queue job → rows. An export is decoded again (the gateway validated it; decoding is ~1 µs a
 * span), each span normalised and priced, and the job resolves only when its rows are stored, so
 * BullMQ acknowledges nothing that could still be lost. Input that cannot be decoded is poison:
 * retrying cannot help, so it goes to the failed set at once with the reason.
 */
export class IngestProcessor {
  constructor(private readonly deps: IngestProcessorDeps) {}

  async process(job: Job<IngestJob>): Promise<{ stored: number }> {
    if (job.name === IngestJobName.Accounting) {
      const data = job.data as AccountingJob;
      await this.deps.accounting.add(data.entries.map((e) => ({ tenant_id: e.tenantId, project_id: e.projectId, minute: Math.floor(e.minute / 1000), outcome: e.outcome, reason: e.reason, batch_id: data.batchId, requests: e.requests, spans: e.spans, bytes: e.bytes })));
      return { stored: 0 };
    }
    if (job.name !== IngestJobName.Export) throw new UnrecoverableError(`unknown ingest job name "${job.name}"`);
    return this.processExport(job.data as ExportJob);
  }

  private async processExport(job: ExportJob): Promise<{ stored: number }> {
    let result: DecodeResult;
    try {
      const body = unpackExportBody(job);
      result = job.format === 'protobuf' ? decodeProtobufExport(body) : decodeJsonExport(body.toString('utf8'));
    } catch (error) {
      if (error instanceof OtlpDecodeError) throw new UnrecoverableError(`export ${job.exportId} cannot be decoded: ${error.message}`);
      throw error;
    }
    const pricing = await this.deps.pricing.forProject(job.projectId);
    const rows: SpanRow[] = [];
    let dropped = 0;
    for (const span of result.spans) {
      const normalized = normalizeSpan(span);
      if (normalized.drop) {
        dropped++;
        continue;
      }
      rows.push(toSpanRow(job.tenantId, job.projectId, span, normalized, pricing.price(normalized, span.startTimeUnixNano)));
    }
    await Promise.all([this.deps.spans.write(rows), this.deps.accounting.add(accountingRows(job, result, dropped))]);
    return { stored: rows.length };
  }
}

/** received / accepted / rejected-by-reason for one export, keyed by its id so a retry rewrites them. */
function accountingRows(job: ExportJob, result: DecodeResult, dropped: number): AccountingRow[] {
  const base = { tenant_id: job.tenantId, project_id: job.projectId, minute: Math.floor(job.receivedAt / 60_000) * 60, batch_id: job.exportId };
  const rows: AccountingRow[] = [
    { ...base, outcome: 'received', reason: '', requests: 1, spans: result.received, bytes: job.bytes },
    { ...base, outcome: 'accepted', reason: '', requests: 1, spans: result.spans.length - dropped, bytes: 0 },
  ];
  for (const [reason, spans] of Object.entries(result.rejectReasons)) {
    if (spans) rows.push({ ...base, outcome: 'rejected', reason, requests: 1, spans, bytes: 0 });
  }
  // Placeholders (Logfire pending spans) are valid but not stored: counted apart from rejections.
  if (dropped > 0) rows.push({ ...base, outcome: 'dropped', reason: 'pending_span', requests: 1, spans: dropped, bytes: 0 });
  return rows;
}
