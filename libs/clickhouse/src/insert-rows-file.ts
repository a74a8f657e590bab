import { reasonOf, stderrLog } from '@spanforge/postgres';
import { randomUUID } from 'node:crypto';
import { mkdirSync, realpathSync, rmSync } from 'node:fs';
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

  /** Opened once the engine holds its directory: a second process on it would have failed before emptying anything. */
  constructor(dir: string) {
    mkdirSync(dir, { recursive: true, mode: 0o700 });
    // By its real path, so that two spellings of one directory are emptied once.
    const real = realpathSync(dir);
    if (NOT_A_PLAIN_NAME.test(real)) {
      stderrLog('clickhouse').warn(
        `inserts' rows go in the statements' text: the engine would read ${real} as a pattern (it has one of * ? { } [ ] ' \\)`,
      );
      return;
    }
    this.dir = real;
    if (!emptied.has(real)) {
      rmSync(real, { recursive: true, force: true });
      emptied.add(real);
      mkdirSync(real, { recursive: true, mode: 0o700 });
    }
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
    try {
      while (this.dir === undefined || chars < ROWS_IN_FILE_FROM_CHARS) {
        const next = await chunks.next();
        if (next.done) return { text: textOf(head) };
        const chunk = chunkOf(next.value);
        head.push(chunk);
        chars += chunk.length;
      }
    } catch (error) {
      await closeQuietly(chunks, error);
      throw error;
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
    const file = path.join(dir, `${randomUUID()}.rows`);
    let handle: FileHandle | undefined;
    try {
      handle = await open(file, 'wx', 0o600).catch(async (error: NodeJS.ErrnoException) => {
        if (error.code !== 'ENOENT') throw error;
        // The directory was removed since the start: made again.
        await mkdir(dir, { recursive: true, mode: 0o700 });
        return open(file, 'wx', 0o600);
      });
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
      if (rest) await closeQuietly(rest, error);
      // Not opened: there is no file to remove.
      if (handle === undefined) throw error;
      await handle.close().catch((closeError: unknown) => {
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
 * Ends the rows' iterator after a failure (what `for await` does when its body throws), so that a
 * stream behind it is destroyed rather than left paused. A failure to end it is logged beside the
 * failure being thrown.
 */
async function closeQuietly(chunks: AsyncIterator<unknown>, failure: unknown): Promise<void> {
  try {
    await chunks.return?.();
  } catch (error) {
    stderrLog('clickhouse').warn(`ending an insert's rows after ${reasonOf(failure)}: ${reasonOf(error)}`);
  }
}

/**
 * `error` (its message, stack and causes) with `file` named as "the insert's rows": a refusal names
 * the rows, not the server's directories, wherever it is logged or kept (a dead letter's reason).
 */
export function withoutFileName(error: unknown, file: string): unknown {
  const named = (text: string) => text.split(file).join("the insert's rows");
  for (let at: unknown = error, depth = 0; at instanceof Error && depth < 5; at = at.cause, depth++) {
    at.message = named(at.message);
    if (at.stack !== undefined) at.stack = named(at.stack);
  }
  return error;
}
