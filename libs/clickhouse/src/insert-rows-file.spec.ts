import { mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Readable } from 'node:stream';
import { InsertRowsFiles, ROWS_IN_FILE_FROM_CHARS, readingRowsFrom, rowsCanBeInFile, withoutFileName } from './insert-rows-file';

describe('readingRowsFrom', () => {
  it('reads the rows of an insert whose rows follow it from the file, before its FORMAT', () => {
    expect(readingRowsFrom('INSERT INTO spans FORMAT JSONEachRow', '/d/a.rows')).toBe(
      "INSERT INTO spans FROM INFILE '/d/a.rows' FORMAT JSONEachRow",
    );
    expect(readingRowsFrom('INSERT INTO default.t (a, b) FORMAT TabSeparated', '/d/a.rows')).toBe(
      "INSERT INTO default.t (a, b) FROM INFILE '/d/a.rows' FORMAT TabSeparated",
    );
  });

  it('takes only that shape: anything else keeps its rows after its text', () => {
    for (const query of [
      'INSERT INTO spans FORMAT JSONEachRow',
      '  insert into `default`.`my_table` format JSONEachRow\n',
      'INSERT INTO t (a, b) FORMAT CSV',
    ])
      expect(rowsCanBeInFile(query)).toBe(true);
    for (const query of [
      'INSERT INTO t SELECT * FROM u',
      'INSERT INTO t SETTINGS async_insert = 1 FORMAT JSONEachRow',
      "INSERT INTO t FROM INFILE 'x' FORMAT CSV",
      'INSERT INTO t VALUES (1)',
      'SELECT 1 FORMAT JSONEachRow',
    ])
      expect(rowsCanBeInFile(query)).toBe(false);
    expect(() => readingRowsFrom('INSERT INTO t VALUES (1)', '/d/a.rows')).toThrow('not an insert whose rows follow it');
  });
});

describe('InsertRowsFiles', () => {
  let root: string;
  beforeEach(() => {
    root = mkdtempSync(path.join(os.tmpdir(), 'spanforge-insert-rows-'));
  });
  afterEach(() => rmSync(root, { recursive: true, force: true }));

  const line = (i: number) => `{"i":${i},"s":"${'x'.repeat(90)}"}\n`;
  const lines = (n: number) => Array.from({ length: n }, (_, i) => line(i));

  it('keeps fewer than ROWS_IN_FILE_FROM_CHARS characters in the text, as one string', async () => {
    const files = new InsertRowsFiles(path.join(root, 'rows'));
    // As many rows as stay under the threshold.
    const few: string[] = [];
    for (let chars = 0; chars + line(few.length).length < ROWS_IN_FILE_FROM_CHARS; chars += line(few.length).length)
      few.push(line(few.length));
    expect(few.join('').length).toBeGreaterThan(ROWS_IN_FILE_FROM_CHARS - 200);
    expect(await files.rowsOf(Readable.from(few))).toEqual({ text: few.join('') });
    expect(await files.rowsOf(few.join(''))).toEqual({ text: few.join('') });
    expect(readdirSync(path.join(root, 'rows'))).toEqual([]);
  });

  it('writes more to a file of its own, readable by this user only, with every row in order', async () => {
    const files = new InsertRowsFiles(path.join(root, 'rows'));
    // More than a write's worth (1 MiB), so that the file is written in several writes.
    const many = lines(20_000);
    const rows = await files.rowsOf(Readable.from(many));
    if (!('file' in rows)) throw new Error('expected a file');
    expect(path.dirname(rows.file)).toBe(path.join(root, 'rows'));
    expect(readFileSync(rows.file, 'utf8')).toBe(many.join(''));
    expect(statSync(rows.file).mode & 0o777).toBe(0o600);
    expect(statSync(path.join(root, 'rows')).mode & 0o777).toBe(0o700);
    await files.remove(rows.file);
    expect(readdirSync(path.join(root, 'rows'))).toEqual([]);
  });

  it('decodes bytes kept in the text across chunk boundaries, and writes bytes as they are', async () => {
    const files = new InsertRowsFiles(path.join(root, 'rows'));
    const text = '{"s":"é€😀"}\n';
    const bytes = Buffer.from(text, 'utf8');
    // Every character split across two chunks.
    const chunks = Array.from(bytes, (byte) => Buffer.from([byte]));
    expect(await files.rowsOf(Readable.from(chunks))).toEqual({ text });
    const big = Buffer.from(text.repeat(Math.ceil(ROWS_IN_FILE_FROM_CHARS / bytes.length) + 1), 'utf8');
    const rows = await files.rowsOf(Readable.from([big.subarray(0, 7), big.subarray(7)]));
    if (!('file' in rows)) throw new Error('expected a file');
    expect(readFileSync(rows.file).equals(big)).toBe(true);
  });

  it("removes an earlier process's files when it opens the directory, and not another client's of this process", async () => {
    const dir = path.join(root, 'rows');
    mkdirSync(dir);
    writeFileSync(path.join(dir, 'left-by-a-killed-process.rows'), 'x');
    const first = new InsertRowsFiles(dir);
    expect(readdirSync(dir)).toEqual([]);
    writeFileSync(path.join(dir, 'left-by-a-killed-process.rows'), 'x');
    // The directory is emptied once a process, whatever its spelling: a second client of the same engine keeps the first's files.
    symlinkSync(dir, path.join(root, 'link'));
    new InsertRowsFiles(dir);
    new InsertRowsFiles(path.join(root, 'link'));
    expect(readdirSync(dir)).toEqual(['left-by-a-killed-process.rows']);
    const rows = await first.rowsOf('y'.repeat(ROWS_IN_FILE_FROM_CHARS));
    expect('file' in rows).toBe(true);
  });

  it('makes its directory again when something removed it', async () => {
    const files = new InsertRowsFiles(path.join(root, 'rows'));
    rmSync(path.join(root, 'rows'), { recursive: true });
    const rows = await files.rowsOf('r'.repeat(ROWS_IN_FILE_FROM_CHARS));
    if (!('file' in rows)) throw new Error('expected a file');
    expect(readFileSync(rows.file, 'utf8')).toBe('r'.repeat(ROWS_IN_FILE_FROM_CHARS));
  });

  it('keeps every row in the text where the directory would be read as a pattern', async () => {
    const files = new InsertRowsFiles(path.join(root, 'rows{1,2}'));
    const text = 'z'.repeat(ROWS_IN_FILE_FROM_CHARS * 2);
    expect(await files.rowsOf(text)).toEqual({ text });
    expect(await files.rowsOf(Readable.from([text, text]))).toEqual({ text: text + text });
  });

  it('removes a file whose rows failed to arrive, and throws their failure', async () => {
    const files = new InsertRowsFiles(path.join(root, 'rows'));
    async function* failing() {
      yield 'a'.repeat(ROWS_IN_FILE_FROM_CHARS);
      yield 'b'.repeat(10);
      throw new Error('the stream broke');
    }
    await expect(files.rowsOf(failing())).rejects.toThrow('the stream broke');
    expect(readdirSync(path.join(root, 'rows'))).toEqual([]);
    await expect(files.rowsOf(Readable.from([{ not: 'rows' }]))).rejects.toThrow("an insert's rows are strings or bytes, not object");
  });
});

describe('withoutFileName', () => {
  it("names the file as the insert's rows in an engine's message", () => {
    const error = new Error('Cannot parse input: (at row 1): (in file/uri /data/insert-rows/1.rows): data for INSERT was parsed from file');
    expect((withoutFileName(error, '/data/insert-rows/1.rows') as Error).message).toBe(
      "Cannot parse input: (at row 1): (in file/uri the insert's rows): data for INSERT was parsed from file",
    );
    expect(withoutFileName('text', '/x')).toBe('text');
    // Its stack and causes too: loggers print the stack.
    const wrapped = new Error('Code: 27. in /d/2.rows', { cause: new Error('native: /d/2.rows') });
    withoutFileName(wrapped, '/d/2.rows');
    expect(wrapped.stack).not.toContain('/d/2.rows');
    expect((wrapped.cause as Error).message).toBe("native: the insert's rows");
  });
});
