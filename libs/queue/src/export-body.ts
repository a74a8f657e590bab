import { constants, zstdCompressSync, zstdDecompressSync } from 'node:zlib';
import type { ExportJob } from './ingest.queue';

/** zstd level 1: the fastest level; higher levels buy little on OTLP payloads (BENCHMARKS.md). */
const ZSTD_LEVEL = 1;

export function packExportBody(body: Buffer): Pick<ExportJob, 'body' | 'encoding'> {
  const compressed = zstdCompressSync(body, { params: { [constants.ZSTD_c_compressionLevel]: ZSTD_LEVEL } });
  return { body: compressed.toString('base64'), encoding: 'zstd' };
}

export function unpackExportBody(job: Pick<ExportJob, 'body' | 'encoding'>): Buffer {
  const bytes = Buffer.from(job.body, 'base64');
  return job.encoding === 'zstd' ? zstdDecompressSync(bytes) : bytes;
}
