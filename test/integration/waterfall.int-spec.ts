import { execFile, spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { CRITICAL_BAND, ERROR_RED, TYPE_COLOUR } from '@spanforge/api-app';
import { SpanRecorder, exportSpans, exportSucceeded, otlpExporter } from '../support';
import { pixelsOf, readPng } from '../support/png';
import { expectedTrace, recordAgentTrace } from './agent-trace';
import { startIngestHarness, type IngestHarness } from './ingest-harness';

const run = promisify(execFile);
const CHROMIUM = spawnSync('sh', ['-c', 'command -v chromium']).stdout.toString().trim();
/** The flags a sandboxed, offline machine needs (see the environment notes). */
const FLAGS = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
];

/** Width and height from a PNG's IHDR chunk. */
function pngSize(file: string): { width: number; height: number; bytes: number } {
  const png = readFileSync(file);
  expect(png.subarray(1, 4).toString('ascii')).toBe('PNG');
  return { width: png.readUInt32BE(16), height: png.readUInt32BE(20), bytes: png.length };
}

describe('trace waterfall picture', () => {
  let h: IngestHarness;
  let api: string;
  let project: Awaited<ReturnType<IngestHarness['newProject']>>;
  let traceId: string;
  let spanNames: string[];
  const dir = mkdtempSync(path.join(os.tmpdir(), 'waterfall-'));

  beforeAll(async () => {
    if (!CHROMIUM) {
      if (process.env.CI) throw new Error("chromium is not installed: CI must install Debian's chromium for the waterfall test");
      process.stderr.write('\n!!! chromium not found: the waterfall browser test is SKIPPED (apt-get install chromium to run it)\n\n');
    }
    h = await startIngestHarness();
    api = h.api;
    project = await h.newProject();
    const recorder = new SpanRecorder('waterfall-agent');
    recordAgentTrace(recorder, {
      session: 'w',
      calls: [
        { model: 'gpt-4o-mini', provider: 'openai', input: 500, cacheRead: 0, output: 50 },
        { model: 'gpt-4o-mini', provider: 'openai', input: 700, cacheRead: 0, output: 70, failed: true },
      ],
      start: Date.UTC(2026, 10, 12),
    });
    const spans = recorder.finished();
    traceId = expectedTrace(spans).traceId;
    spanNames = spans.map((s) => s.name);
    expect(exportSucceeded(await exportSpans(otlpExporter('http/protobuf', { http: h.http, grpc: h.grpc }, project.apiKey), spans))).toBe(
      true,
    );
    await h.waitForSpans(project.projectId, spans.length);
  });
  afterAll(async () => {
    await h.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  it('is served as SVG with the project key only', async () => {
    const url = `${api}/v1/traces/${traceId}/waterfall.svg`;
    // Refusals in the REST error shape, with the codes GraphQL uses.
    const refusal = async (response: Response) => ({ status: response.status, body: (await response.json()) as unknown });
    expect(await refusal(await fetch(url))).toEqual({
      status: 401,
      body: { error: { code: 'UNAUTHENTICATED', message: 'a valid project API key is required' } },
    });
    const other = await h.newProject();
    expect(await refusal(await fetch(url, { headers: { authorization: `Bearer ${other.apiKey}` } }))).toEqual({
      status: 404,
      body: { error: { code: 'NOT_FOUND', message: 'no such trace in this project' } },
    });
    expect(
      await refusal(await fetch(`${api}/v1/traces/not-hex/waterfall.svg`, { headers: { authorization: `Bearer ${project.apiKey}` } })),
    ).toEqual({
      status: 400,
      body: { error: { code: 'BAD_USER_INPUT', message: 'traceId must be 32 hex characters' } },
    });
    expect(await refusal(await fetch(`${api}/v1/no-such-route`))).toEqual({
      status: 404,
      body: { error: { code: 'NOT_FOUND', message: expect.stringContaining('/v1/no-such-route') } },
    });
    const response = await fetch(url, { headers: { authorization: `Bearer ${project.apiKey}` } });
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toContain('image/svg+xml');
    // The whole trace is drawn (a trace larger than one read says so here and in its title: query.int-spec.ts).
    expect(response.headers.get('x-spanforge-spans-truncated')).toBe('false');
    const svg = await response.text();
    expect(svg).not.toContain('spans only');
    // A trace id is read in any case, as in GraphQL.
    const upper = await fetch(`${api}/v1/traces/${traceId.toUpperCase()}/waterfall.svg`, {
      headers: { authorization: `Bearer ${project.apiKey}` },
    });
    expect({ status: upper.status, svg: await upper.text() }).toEqual({ status: 200, svg });
    for (const name of new Set(spanNames)) expect(svg).toContain(name);
    writeFileSync(path.join(dir, 'trace.svg'), svg);
  });

  it('renders in headless Chromium: the DOM has a bar per span and the screenshot is not blank', async () => {
    if (!CHROMIUM) return;
    const svgFile = path.join(dir, 'trace.svg');
    const { stdout: dom } = await run(
      CHROMIUM,
      [...FLAGS, `--user-data-dir=${path.join(dir, 'profile-dom')}`, '--dump-dom', `file://${svgFile}`],
      { timeout: 60_000 },
    );
    for (const name of new Set(spanNames)) expect(dom).toContain(name);
    await run(
      CHROMIUM,
      [
        ...FLAGS,
        `--user-data-dir=${path.join(dir, 'profile-shot')}`,
        `--screenshot=${path.join(dir, 'trace.png')}`,
        '--window-size=1300,700',
        `file://${svgFile}`,
      ],
      { timeout: 60_000 },
    );
    writeFileSync(path.join(dir, 'blank.svg'), '<svg xmlns="http://www.w3.org/2000/svg" width="1200" height="400"/>');
    await run(
      CHROMIUM,
      [
        ...FLAGS,
        `--user-data-dir=${path.join(dir, 'profile-blank')}`,
        `--screenshot=${path.join(dir, 'blank.png')}`,
        '--window-size=1300,700',
        `file://${path.join(dir, 'blank.svg')}`,
      ],
      { timeout: 60_000 },
    );
    const shot = pngSize(path.join(dir, 'trace.png'));
    const blank = pngSize(path.join(dir, 'blank.png'));
    expect({ width: shot.width, height: shot.height }).toEqual({ width: 1300, height: 700 });
    // A blank page compresses to almost nothing; bars, labels and colours do not.
    expect(shot.bytes).toBeGreaterThan(blank.bytes * 5);
    // What a reader sees: bars in the colour of their span type, the band behind the critical
    // path, and the failed call's red outline, none of which a blank page has.
    const picture = readPng(path.join(dir, 'trace.png'));
    const empty = readPng(path.join(dir, 'blank.png'));
    const seen = Object.fromEntries(
      Object.entries({
        run: TYPE_COLOUR.RUN,
        llm: TYPE_COLOUR.LLM,
        tool: TYPE_COLOUR.TOOL,
        criticalBand: CRITICAL_BAND,
        error: ERROR_RED,
      }).map(([what, colour]) => [what, pixelsOf(picture, colour)]),
    );
    expect(seen).toEqual({
      run: expect.any(Number),
      llm: expect.any(Number),
      tool: expect.any(Number),
      criticalBand: expect.any(Number),
      error: expect.any(Number),
    });
    for (const [what, count] of Object.entries(seen))
      expect({ what, enough: count >= (what === 'error' ? 10 : 200) }).toEqual({ what, enough: true });
    for (const colour of [TYPE_COLOUR.RUN, TYPE_COLOUR.LLM, TYPE_COLOUR.TOOL, CRITICAL_BAND, ERROR_RED])
      expect(pixelsOf(empty, colour)).toBe(0);
  });
});
