import { reasonOf, stderrLog } from '@spanforge/postgres';
import { randomUUID } from 'node:crypto';
import { mkdirSync, rmSync } from 'node:fs';
import { mkdir, open, unlink, type FileHandle } from 'node:fs/promises';
import path from 'node:path';
import { StringDecoder } from 'node:string_decoder';

/**
 * An insert's rows from this many characters on go to the embedded engine in a file; fewer go in
 * the statement's text (docs/architecture.md, "An insert's rows in a file").
 */
export const ROWS_IN_FILE_FROM_CHARS = 64 * 1024;

/** Rows are written to the file in writes of about this many bytes. */
const WRITE_BYTES = 1024 * 1024;

/**
 * `INSERT INTO <table> [(<columns>)] FORMAT <format>`: how @clickhouse/client and insertLines write
 * an insert whose rows follow the statement. Its first group is everything before FORMAT.
 */
const INSERT_THEN_ROWS = /^(\s*INSERT\s+INTO\s+[\w.`"]+(?:\s*\([^()]*\))?)\s+(FORMAT\s+\w+)\s*$/i;

/** Characters the engine reads as a pattern in a file name (`FROM INFILE` takes globs), or that end its quoting. */
const NOT_A_PLAIN_NAME = /[*?{}[\]'\\]/;

/** Whether `query` is an insert whose rows could be read from a file (INSERT_THEN_ROWS). */
export function rowsCanBeInFile(query: string): boolean {
  return INSERT_THEN_ROWS.test(query);
}

/** The insert `query` (INSERT_THEN_ROWS) reading its rows from `file` instead of after its text. */
export function readingRowsFrom(query: string, file: string): string {
  const insert = INSERT_THEN_ROWS.exec(query);
  if (!insert) throw new Error(`not an insert whose rows follow it: ${query.slice(0, 200)}`);
  return `${insert[1]} FROM INFILE '${file}' ${insert[2]}`;
}

/** An insert's rows: in the statement's text, or in a file the engine reads. */
export type InsertRows = { text: string } | { file: string };

/** A chunk of an insert's rows as @clickhouse/client and chDB take them: a string or bytes. */
function chunkOf(chunk: unknown): string | Uint8Array {
  if (typeof chunk === 'string' || chunk instanceof Uint8Array) return chunk;
  throw new Error(`an insert's rows are strings or bytes, not ${typeof chunk}`);
}

/** The text of chunks in order, bytes decoded as UTF-8 across their boundaries. */
function textOf(chunks: Array<string | Uint8Array>): string {
  const decoder = new StringDecoder('utf8');
  let text = '';
  for (const chunk of chunks) text += typeof chunk === 'string' ? decoder.end() + chunk : decoder.write(Buffer.from(chunk));
  return text + decoder.end();
}

/** Directories this process has emptied of an earlier process's files (one engine directory per process). */
const emptied = new Set<string>();

/**
 * The embedded engine's files of insert rows (docs/architecture.md, "An insert's rows in a file").
 * When an insert's rows follow its statement, the engine's client side reads the whole text
 * (several passes of its SQL lexer and copies, 4–5 ms a MB) on the calling thread before the
 * statement's settings, among them the shared lane's CPU priority, apply to it. From a file the
 * statement's text is a line, and the engine's own threads read the rows, at the statement's
 * priority. The files live in `dir` (in the engine's 0700 directory), each readable by this
 * process's user only, and are removed once the statement has run; those of a process that ended
 * before removing them are removed when the next process opens the directory.
 */
export class InsertRowsFiles {
  /** Undefined when the directory's name cannot be written in a statement (NOT_A_PLAIN_NAME): rows then go in the text. */
  private readonly dir: string | undefined;

  constructor(dir: string) {
    const absolute = path.resolve(dir);
    if (NOT_A_PLAIN_NAME.test(absolute)) {
      stderrLog('clickhouse').warn(
        `inserts' rows go in the statements' text: the engine would read ${absolute} as a pattern (it has one of * ? { } [ ] ' \\)`,
      );
      return;
    }
    this.dir = absolute;
    if (!emptied.has(absolute)) {
      rmSync(absolute, { recursive: true, force: true });
      emptied.add(absolute);
    }
    mkdirSync(absolute, { recursive: true, mode: 0o700 });
  }

  /**
   * The rows `values` (a string, bytes, or an iterable of either), in the text when fewer than
   * ROWS_IN_FILE_FROM_CHARS characters, else written to a new file. The caller removes the file
   * (remove) once its statement has run.
   */
  async rowsOf(values: unknown): Promise<InsertRows> {
    if (typeof values === 'string' || values instanceof Uint8Array) {
      return this.dir === undefined || values.length < ROWS_IN_FILE_FROM_CHARS
        ? { text: textOf([values]) }
        : { file: await this.write([values], undefined) };
    }
    const chunks = chunksOf(values);
    const head: Array<string | Uint8Array> = [];
    // Bytes count as characters here: a threshold, not a measure.
    let chars = 0;
    while (this.dir === undefined || chars < ROWS_IN_FILE_FROM_CHARS) {
      const next = await chunks.next();
      if (next.done) return { text: textOf(head) };
      const chunk = chunkOf(next.value);
      head.push(chunk);
      chars += chunk.length;
    }
    return { file: await this.write(head, chunks) };
  }

  /** Removes an insert's file; a failure is logged (the next process's start removes what is left). */
  async remove(file: string): Promise<void> {
    try {
      await unlink(file);
    } catch (error) {
      stderrLog('clickhouse').warn(`could not remove the insert's rows file ${file}: ${reasonOf(error)}`);
    }
  }

  /** Writes `head` and then what `rest` yields to a new file; answers its path. */
  private async write(head: unknown[], rest: AsyncIterator<unknown> | undefined): Promise<string> {
    const dir = this.dir!;
    // Made again should anything have removed it since the start.
    await mkdir(dir, { recursive: true, mode: 0o700 });
    const file = path.join(dir, `${randomUUID()}.rows`);
    let handle: FileHandle | undefined;
    try {
      handle = await open(file, 'wx', 0o600);
      let pending: Uint8Array[] = [];
      let bytes = 0;
      const add = async (chunk: unknown) => {
        const rows = chunkOf(chunk);
        const data = typeof rows === 'string' ? Buffer.from(rows, 'utf8') : rows;
        pending.push(data);
        bytes += data.byteLength;
        if (bytes < WRITE_BYTES) return;
        await handle!.writev(pending);
        pending = [];
        bytes = 0;
      };
      for (const chunk of head) await add(chunk);
      if (rest) for (let next = await rest.next(); !next.done; next = await rest.next()) await add(next.value);
      if (pending.length > 0) await handle.writev(pending);
      await handle.close();
      return file;
    } catch (error) {
      await handle?.close().catch((closeError: unknown) => {
        stderrLog('clickhouse').warn(`closing the insert's rows file ${file} after a failed write: ${reasonOf(closeError)}`);
      });
      await this.remove(file);
      throw error;
    }
  }
}

/** The chunks of an iterable of insert rows (a Readable, or any sync or async iterable). */
function chunksOf(values: unknown): AsyncIterator<unknown> {
  if (values !== null && typeof values === 'object') {
    if (Symbol.asyncIterator in values) return (values as AsyncIterable<unknown>)[Symbol.asyncIterator]();
    if (Symbol.iterator in values) {
      const iterator = (values as Iterable<unknown>)[Symbol.iterator]();
      return { next: async () => iterator.next() };
    }
  }
  throw new Error(`an insert's rows are a string, bytes or an iterable of them, not ${typeof values}`);
}

/**
 * `error` with `file` named as "the insert's rows": an engine's refusal of a row reads as it would
 * had the rows followed the statement, and keeps the server's directories out of dead letters.
 */
export function withoutFileName(error: unknown, file: string): unknown {
  if (error instanceof Error && error.message.includes(file)) error.message = error.message.split(file).join("the insert's rows");
  return error;
}
