import type { Readable } from 'node:stream';
import { createGunzip, createInflate } from 'node:zlib';

export class BodyTooLargeError extends Error {
  constructor(readonly limit: number) {
    super(`request body is larger than ${limit} bytes after decompression (OTLP_MAX_BODY_BYTES)`);
  }
}

export class BadEncodingError extends Error {}

/**
 * Reads a request body, inflating gzip/deflate as a stream and stopping the moment the
 * decompressed size passes the cap, so a gzip bomb costs at most `maxBytes` of memory and the
 * CPU to produce them.
 */
export async function readBody(stream: Readable, contentEncoding: string | undefined, maxBytes: number): Promise<Buffer> {
  const encoding = (contentEncoding ?? 'identity').trim().toLowerCase();
  let source: Readable = stream;
  if (encoding === 'gzip' || encoding === 'x-gzip') source = stream.pipe(createGunzip());
  else if (encoding === 'deflate') source = stream.pipe(createInflate());
  else if (encoding !== 'identity' && encoding !== '')
    throw new BadEncodingError(`unsupported Content-Encoding "${encoding}" (use gzip or none)`);

  const chunks: Buffer[] = [];
  let size = 0;
  try {
    // Leaving the loop early must not destroy the request either (see below).
    for await (const chunk of source.iterator({ destroyOnReturn: source !== stream })) {
      size += (chunk as Buffer).length;
      if (size > maxBytes) {
        // Stop inflating, and drain the rest of the upload without keeping it: destroying the
        // request would reset the connection before the 413 could be written.
        if (source !== stream) {
          stream.unpipe(source as unknown as NodeJS.WritableStream);
          source.destroy();
        }
        stream.resume();
        throw new BodyTooLargeError(maxBytes);
      }
      chunks.push(chunk as Buffer);
    }
  } catch (error) {
    if (error instanceof BodyTooLargeError) throw error;
    const code = (error as NodeJS.ErrnoException).code ?? '';
    if (code.startsWith('Z_')) throw new BadEncodingError(`the body is not valid ${encoding} data`);
    throw error;
  }
  return chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks, size);
}
