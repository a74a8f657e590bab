import { Readable } from 'node:stream';
import type { ClickHouseClient } from '@clickhouse/client';
import { insertLines } from './statements';

/** A client that reads an insert's stream to its end and keeps each chunk it was sent. */
function recordingClient() {
  const chunks: Array<string | Buffer> = [];
  const client = {
    exec: async ({ values }: { values: Readable }) => {
      for await (const chunk of values) chunks.push(chunk as string | Buffer);
      return { stream: Readable.from([]) };
    },
  } as unknown as ClickHouseClient;
  return { client, chunks };
}

const asText = (chunks: Array<string | Buffer>) =>
  chunks.map((chunk) => (typeof chunk === 'string' ? chunk : chunk.toString('utf8'))).join('');

describe('insertLines', () => {
  it('sends byte lines in chunks of about a MiB, not one a row, every byte in order', async () => {
    // 3,000 rows of about 1,000 bytes, with characters of two and three bytes in UTF-8: about 2.9 MiB.
    const rows = Array.from({ length: 3_000 }, (_, i) => `${JSON.stringify({ i, text: `é→${'x'.repeat(982 - String(i).length)}` })}\n`);
    const { client, chunks } = recordingClient();
    await insertLines(
      client,
      'INSERT INTO spans FORMAT JSONEachRow',
      rows.map((row) => Buffer.from(row)),
      'test.insert',
    );

    const longest = Math.max(...rows.map((row) => Buffer.byteLength(row)));
    expect(chunks.every((chunk) => Buffer.isBuffer(chunk))).toBe(true);
    // Each chunk but the last is the first run of rows to reach a MiB.
    expect(chunks.slice(0, -1).every((chunk) => chunk.length >= 1024 * 1024 && chunk.length < 1024 * 1024 + longest)).toBe(true);
    expect(chunks).toHaveLength(3);
    expect(asText(chunks)).toBe(rows.join(''));
  });

  it('sends nothing for no lines, and no empty chunk around text lines that start or end the insert', async () => {
    const none = recordingClient();
    await insertLines(none.client, 'INSERT INTO t FORMAT JSONEachRow', [], 'test.insert');
    expect(none.chunks).toEqual([]);

    const { client, chunks } = recordingClient();
    await insertLines(client, 'INSERT INTO t FORMAT JSONEachRow', ['{"a":1}\n', Buffer.from('{"a":2}\n'), '{"a":3}\n'], 'test.insert');
    expect(chunks.map((chunk) => (typeof chunk === 'string' ? `text ${chunk}` : `bytes ${chunk.toString('utf8')}`))).toEqual([
      'text {"a":1}\n',
      'bytes {"a":2}\n',
      'text {"a":3}\n',
    ]);
  });

  it('sends text lines as they are, with the byte lines around them joined in order', async () => {
    const { client, chunks } = recordingClient();
    await insertLines(
      client,
      'INSERT INTO t FORMAT JSONEachRow',
      [Buffer.from('{"a":1}\n'), Buffer.from('{"a":2}\n'), '{"a":3}\n', Buffer.from('{"a":4}\n')],
      'test.insert',
    );

    expect(chunks.map((chunk) => (typeof chunk === 'string' ? `text ${chunk}` : `bytes ${chunk.toString('utf8')}`))).toEqual([
      'bytes {"a":1}\n{"a":2}\n',
      'text {"a":3}\n',
      'bytes {"a":4}\n',
    ]);
  });
});
