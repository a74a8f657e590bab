import { decodeProtobufExport } from '@spanforge/otlp';
import { packExportBody, unpackExportBody, type ExportJob } from '@spanforge/queue';
import type { BenchStack } from './bench-stack';
import type { Corpus } from './corpus';

/** Spans moved through the queue in each variant. */
const SAMPLE_SPANS = 5_000;

/**
 * The queue hop, measured both ways on this process's queue backend, as Node CPU time (user +
 * system) per span for producer and consumer together:
 * - per-span JSON: one job per span carrying the decoded span as JSON (what a naive design queues);
 * - one job per export: the OTLP body zstd-compressed and base64-encoded, decoded again by the consumer.
 */
export async function measureQueueHop(
  infra: BenchStack,
  corpus: Corpus,
): Promise<{ perSpanJsonCpuUsPerSpan: number; perExportBytesCpuUsPerSpan: number; sampleSpans: number }> {
  const requests: Uint8Array[] = [];
  let spans = 0;
  for (const request of corpus.requests) {
    if (spans >= SAMPLE_SPANS) break;
    requests.push(request);
    spans += decodeProtobufExport(request).spans.length;
  }
  const decoded = requests.flatMap((r) =>
    decodeProtobufExport(r).spans.map((s) => ({
      ...s,
      startTimeUnixNano: String(s.startTimeUnixNano),
      endTimeUnixNano: String(s.endTimeUnixNano),
      events: [],
    })),
  );

  const perSpan = await cpuPerSpan(
    infra,
    'bench-hop-span',
    decoded.length,
    decoded.length,
    async (queue) => {
      for (let i = 0; i < decoded.length; i += 500) await queue.addBulk(decoded.slice(i, i + 500).map((data) => ({ name: 'span', data })));
    },
    () => undefined,
  );
  const perExport = await cpuPerSpan(
    infra,
    'bench-hop-export',
    requests.length,
    spans,
    async (queue) => {
      await queue.addBulk(requests.map((r) => ({ name: 'export', data: packExportBody(Buffer.from(r)) })));
    },
    (data) => decodeProtobufExport(unpackExportBody(data as ExportJob)).spans.length,
  );
  return { perSpanJsonCpuUsPerSpan: perSpan, perExportBytesCpuUsPerSpan: perExport, sampleSpans: spans };
}

async function cpuPerSpan(
  infra: BenchStack,
  name: string,
  jobs: number,
  spans: number,
  produce: (queue: ReturnType<BenchStack['queues']['queue']>) => Promise<void>,
  consume: (data: unknown) => unknown,
): Promise<number> {
  const queue = infra.queues.queue(name);
  let done = 0;
  const allDone = new Promise<void>((resolve) => {
    infra.queues.worker(
      name,
      async (job) => {
        consume(job.data);
        if (++done === jobs) resolve();
      },
      { concurrency: 64 },
    );
  });
  const cpu = process.cpuUsage();
  await produce(queue);
  await allDone;
  const used = process.cpuUsage(cpu);
  return (used.user + used.system) / spans;
}
