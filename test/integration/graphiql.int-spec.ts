import { readFileSync } from 'node:fs';
import path from 'node:path';
import { gunzipSync } from 'node:zlib';
import { request as httpRequest } from 'node:http';
import { SpanRecorder, exportSpans, exportSucceeded, graphql, otlpExporter, testConfig } from '../support';
import { CHROMIUM, HeadlessChromium, waitFor, type Tab } from '../support/chromium';
import { recordAgentTrace } from './agent-trace';
import { startIngestHarness, type IngestHarness } from './ingest-harness';

/** What the API sends as the explorer page's Content-Security-Policy (apps/api/src/explorer/explorer.page.ts). */
const CSP =
  "default-src 'self'; script-src 'self'; style-src 'self'; style-src-elem 'self' 'unsafe-inline'; img-src 'self' data:; " +
  "font-src 'self' data:; " +
  "connect-src 'self'; object-src 'none'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'";

/** GET with the path sent exactly as written (fetch would resolve `..` and `%2e%2e` before sending). */
function rawGet(base: string, target: string): Promise<{ status: number; body: string }> {
  const { hostname, port } = new URL(base);
  return new Promise((resolve, reject) => {
    const req = httpRequest({ host: hostname, port, path: target, method: 'GET' }, (res) => {
      let body = '';
      res.on('data', (chunk: Buffer) => (body += chunk.toString()));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
    });
    req.on('error', reject);
    req.end();
  });
}

describe('GraphQL explorer (GET /graphiql)', () => {
  let h: IngestHarness;
  let api: string;
  let project: Awaited<ReturnType<IngestHarness['newProject']>>;
  const adminToken = testConfig().adminToken!;

  beforeAll(async () => {
    if (!CHROMIUM) {
      if (process.env.CI) throw new Error("chromium is not installed: CI must install Debian's chromium for the explorer test");
      process.stderr.write('\n!!! chromium not found: the explorer browser test is SKIPPED (apt-get install chromium to run it)\n\n');
    }
    h = await startIngestHarness();
    api = h.api;
    project = await h.newProject('explorer-project');
    const recorder = new SpanRecorder('explorer-agent');
    recordAgentTrace(recorder, {
      session: 'explorer',
      calls: [{ model: 'gpt-4o-mini', provider: 'openai', input: 300, cacheRead: 0, output: 30 }],
      start: Date.UTC(2026, 10, 30),
    });
    const spans = recorder.finished();
    expect(exportSucceeded(await exportSpans(otlpExporter('http/protobuf', { http: h.http, grpc: h.grpc }, project.apiKey), spans))).toBe(
      true,
    );
    await h.waitForSpans(project.projectId, spans.length);
    // The trace's figures are written by the worker's upkeep, just after its spans.
    await waitFor('the trace to be listed', async () => {
      const answer = await graphql<{ traces: { totalCount: number } }>(api, '{ traces { totalCount } }', {}, project.apiKey);
      return answer.data?.traces.totalCount === 1 ? true : undefined;
    });
  });
  afterAll(() => h?.stop());

  /** The asset paths the page's tags name, in order. */
  const assetPaths = (html: string) => [...html.matchAll(/(?:src|href)="(graphiql\/assets\/[^"]+)"/g)].map((m) => `/${m[1]}`);

  it('serves the page without a key, with a CSP that allows this origin only', async () => {
    const response = await fetch(`${api}/graphiql`);
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toBe('text/html; charset=utf-8');
    expect(response.headers.get('content-security-policy')).toBe(CSP);
    expect(response.headers.get('cache-control')).toBe('no-cache');
    const html = await response.text();
    expect(assetPaths(html)).toEqual([
      expect.stringMatching(/^\/graphiql\/assets\/graphiql\.min\.[0-9a-f]{16}\.css$/),
      expect.stringMatching(/^\/graphiql\/assets\/explorer\.[0-9a-f]{16}\.css$/),
      expect.stringMatching(/^\/graphiql\/assets\/react\.production\.min\.[0-9a-f]{16}\.js$/),
      expect.stringMatching(/^\/graphiql\/assets\/react-dom\.production\.min\.[0-9a-f]{16}\.js$/),
      expect.stringMatching(/^\/graphiql\/assets\/graphiql\.min\.[0-9a-f]{16}\.js$/),
      expect.stringMatching(/^\/graphiql\/assets\/explorer\.[0-9a-f]{16}\.js$/),
    ]);
    // Nothing on the page names another origin.
    expect(html).not.toMatch(/(?:src|href)="(?:https?:)?\/\//);
  });

  it('serves the scripts and styles from the npm packages, cached for a year, and nothing outside its list', async () => {
    const html = await (await fetch(`${api}/graphiql`)).text();
    for (const asset of assetPaths(html)) {
      const response = await fetch(`${api}${asset}`, { headers: { 'accept-encoding': 'identity' } });
      expect({ asset, status: response.status }).toEqual({ asset, status: 200 });
      expect(response.headers.get('content-type')).toBe(
        asset.endsWith('.js') ? 'text/javascript; charset=utf-8' : 'text/css; charset=utf-8',
      );
      expect(response.headers.get('cache-control')).toBe('public, max-age=31536000, immutable');
      expect(response.headers.get('x-content-type-options')).toBe('nosniff');
      expect(response.headers.get('content-encoding')).toBeNull();
    }
    const bundle = assetPaths(html).find((p) => p.includes('/graphiql.min.') && p.endsWith('.js'))!;
    const served = Buffer.from(await (await fetch(`${api}${bundle}`, { headers: { 'accept-encoding': 'identity' } })).arrayBuffer());
    expect(served.equals(readFileSync(path.join(path.dirname(require.resolve('graphiql/package.json')), 'dist/index.umd.js')))).toBe(true);
    // Compressed for a browser that says it takes gzip.
    const zipped = await rawGetBuffer(api, bundle, { 'accept-encoding': 'gzip, deflate, br' });
    expect(zipped.headers['content-encoding']).toBe('gzip');
    expect(zipped.body.length).toBeLessThan(served.length / 2);
    expect(gunzipSync(zipped.body).equals(served)).toBe(true);
    // Only the listed names: not the package's other files, not a path out of the folder, not an older hash.
    for (const refused of [
      '/graphiql/assets/index.umd.js',
      '/graphiql/assets/graphiql.min.0000000000000000.js',
      '/graphiql/assets/..%2F..%2Fpackage.json',
      '/graphiql/assets/%2e%2e%2f%2e%2e%2fpackage.json',
      '/graphiql/assets/../../package.json',
      '/graphiql/assets/..%5C..%5Cpackage.json',
    ]) {
      const answer = await rawGet(api, refused);
      expect({ refused, status: answer.status }).toEqual({ refused, status: 404 });
      expect(answer.body).not.toContain('"name": "spanforge"');
    }
  });

  it('serves the schema to a project key or the admin token only, described field by field', async () => {
    const anonymous = await fetch(`${api}/graphiql/schema.json`);
    expect({ status: anonymous.status, body: await anonymous.json() }).toEqual({
      status: 401,
      body: { error: { code: 'UNAUTHENTICATED', message: 'a valid project API key or the admin token is required' } },
    });
    for (const bearer of [project.apiKey, adminToken]) {
      const response = await fetch(`${api}/graphiql/schema.json`, { headers: { authorization: `Bearer ${bearer}` } });
      expect(response.status).toBe(200);
      const { data } = (await response.json()) as {
        data: {
          __schema: {
            types: Array<{ name: string; description: string | null; fields: Array<{ name: string; description: string }> | null }>;
          };
        };
      };
      const query = data.__schema.types.find((t) => t.name === 'Query')!;
      expect(query.fields!.find((f) => f.name === 'traces')!.description).toMatch(/latest start first/);
      expect(data.__schema.types.find((t) => t.name === 'Trace')!.description).toMatch(/trace id/);
    }
  });

  it('is linked from GET /', async () => {
    const index = (await (await fetch(`${api}/`)).json()) as Record<string, unknown>;
    expect(index.explorer).toMatch(/^GET \/graphiql/);
  });

  it('in headless Chromium: loads from this origin only and answers a query typed with a pasted key', async () => {
    if (!CHROMIUM) return;
    const browser = await HeadlessChromium.launch();
    try {
      const tab = await browser.newTab();
      const requests: Array<{ url: string; method: string; headers: Record<string, string> }> = [];
      const problems: string[] = [];
      tab.on('Network.requestWillBeSent', (p) => requests.push((p as { request: (typeof requests)[number] }).request));
      tab.on('Runtime.exceptionThrown', (p) => problems.push(`exception: ${JSON.stringify(p.exceptionDetails)}`));
      // Every Content-Security-Policy violation the page meets (a script of the test's, so the CSP does not apply to it).
      await tab.send('Page.addScriptToEvaluateOnNewDocument', {
        source:
          "window.__csp = []; document.addEventListener('securitypolicyviolation', (e) => window.__csp.push(e.violatedDirective + ' ' + e.blockedURI));",
      });
      const started = Date.now();
      await open(tab, `${api}/graphiql`);
      await waitFor(
        'GraphiQL to render',
        async () => (await tab.evaluate<boolean>(`!!document.querySelector('.graphiql-query-editor .CodeMirror')`)) || undefined,
      );
      const rendered = Date.now() - started;

      // Paste the key, as a person does.
      await tab.evaluate(`document.getElementById('sf-key').focus()`);
      await tab.send('Input.insertText', { text: project.apiKey });
      // The schema is then loaded with it (the docs and completion need it).
      await waitFor('the schema to load with the key', async () =>
        requests.some((r) => r.url.endsWith('/graphiql/schema.json') && r.headers.authorization === `Bearer ${project.apiKey}`)
          ? true
          : undefined,
      );

      // Type a query into the editor over the example, then press the run button.
      const query = '{ currentProject { id } traces(first: 1) { totalCount nodes { rootName } } }';
      await tab.evaluate(`document.querySelector('.graphiql-query-editor .CodeMirror').CodeMirror.focus()`);
      await key(tab, 'a', 'KeyA', 65, CONTROL);
      await tab.send('Input.insertText', { text: query });
      expect(await tab.evaluate<string>(`document.querySelector('.graphiql-query-editor .CodeMirror').CodeMirror.getValue()`)).toBe(query);
      await click(tab, '.graphiql-execute-button');

      const shown = await waitFor('the answer in the result pane', async () => {
        const text = await tab.evaluate<string>(`document.querySelector('.result-window')?.innerText ?? ''`);
        return text.includes('totalCount') ? text : undefined;
      });
      const answer = JSON.parse(
        await tab.evaluate<string>(`document.querySelector('.result-window .CodeMirror').CodeMirror.getValue()`),
      ) as unknown;
      expect(answer).toEqual({
        data: { currentProject: { id: project.projectId }, traces: { totalCount: 1, nodes: [{ rootName: 'agent.run' }] } },
      });
      expect(shown).toContain(`"${project.projectId}"`);

      // The schema is documented where a person reads it: Docs → Query → traces shows its description.
      await click(tab, 'button[aria-label="Show Documentation Explorer"]');
      await click(tab, '.graphiql-doc-explorer a', 'Query');
      await click(tab, '.graphiql-doc-explorer a', 'traces');
      await waitFor('the description of traces', async () =>
        (await tab.evaluate<string>(`document.querySelector('.graphiql-doc-explorer')?.innerText ?? ''`)).includes('latest start first')
          ? true
          : undefined,
      );
      // The dialogs and the history work under the CSP (the dialogs add a <style> element: style-src-elem).
      for (const label of ['Show History', 'Open short keys dialog', 'Open settings dialog']) {
        await click(tab, `button[aria-label="${label}"]`);
        if (label.includes('dialog')) {
          await waitFor(
            `the ${label.replace('Open ', '')}`,
            async () => (await tab.evaluate<boolean>(`!!document.querySelector('[role="dialog"]')`)) || undefined,
          );
          await key(tab, 'Escape', 'Escape', 27, 0);
        }
      }

      // The key is kept in this browser: a reload shows it in the field again.
      expect(await tab.evaluate<string>(`localStorage.getItem('spanforge.explorer.apiKey')`)).toBe(project.apiKey);
      await open(tab, `${api}/graphiql`, 'Page.reload');
      expect(await tab.evaluate<string>(`document.getElementById('sf-key').value`)).toBe(project.apiKey);

      // Every request went to the API's own origin (data: URLs are GraphiQL's embedded fonts and icons, not requests out).
      const origin = new URL(api).origin;
      const elsewhere = requests.filter((r) => !r.url.startsWith('data:') && new URL(r.url).origin !== origin).map((r) => r.url);
      expect(elsewhere).toEqual([]);
      const paths = requests.filter((r) => !r.url.startsWith('data:')).map((r) => `${r.method} ${new URL(r.url).pathname}`);
      expect(new Set(paths)).toEqual(
        new Set([
          'GET /graphiql',
          ...assetPaths(await (await fetch(`${api}/graphiql`)).text()).map((p) => `GET ${p}`),
          'GET /graphiql/schema.json',
          'POST /graphql',
        ]),
      );
      // The key went to this origin's /graphql and schema only.
      const withKey = requests.filter((r) => Object.values(r.headers).some((v) => v.includes(project.apiKey)));
      expect(new Set(withKey.map((r) => new URL(r.url).pathname))).toEqual(new Set(['/graphiql/schema.json', '/graphql']));
      expect(await tab.evaluate<string[]>('window.__csp')).toEqual([]);
      expect(problems).toEqual([]);
      process.stderr.write(`explorer: GraphiQL rendered ${rendered} ms after navigation\n`);
    } finally {
      await browser.close();
    }
  });
});

const CONTROL = 2;

/** Navigates (or reloads) and waits for the load event. */
async function open(tab: Tab, url: string, how: 'Page.navigate' | 'Page.reload' = 'Page.navigate'): Promise<void> {
  const loaded = new Promise((resolve) => tab.on('Page.loadEventFired', resolve));
  await tab.send(how, how === 'Page.navigate' ? { url } : {});
  await loaded;
}

/** A key press with modifiers, as the keyboard sends it. */
async function key(tab: Tab, key: string, code: string, keyCode: number, modifiers: number): Promise<void> {
  for (const type of ['keyDown', 'keyUp'])
    await tab.send('Input.dispatchKeyEvent', { type, key, code, windowsVirtualKeyCode: keyCode, modifiers });
}

/** A mouse click in the middle of the first element matching the selector (and showing `text`, when given). */
async function click(tab: Tab, selector: string, text?: string): Promise<void> {
  const { x, y } = await waitFor(`${selector} ${text ?? ''} to show`, () =>
    tab.evaluate<{ x: number; y: number } | undefined>(
      `(() => {
        const element = [...document.querySelectorAll(${JSON.stringify(selector)})].find((e) => ${JSON.stringify(text ?? null)} === null || e.textContent.trim() === ${JSON.stringify(text ?? null)});
        if (!element) return undefined;
        const r = element.getBoundingClientRect();
        return { x: r.x + r.width / 2, y: r.y + r.height / 2 };
      })()`,
    ),
  );
  for (const type of ['mousePressed', 'mouseReleased'])
    await tab.send('Input.dispatchMouseEvent', { type, x, y, button: 'left', clickCount: 1 });
}

/** GET with chosen headers, the body as bytes as sent (fetch would inflate it). */
function rawGetBuffer(
  base: string,
  target: string,
  headers: Record<string, string>,
): Promise<{ headers: Record<string, unknown>; body: Buffer }> {
  const { hostname, port } = new URL(base);
  return new Promise((resolve, reject) => {
    const req = httpRequest({ host: hostname, port, path: target, method: 'GET', headers }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (chunk: Buffer) => chunks.push(chunk));
      res.on('end', () => resolve({ headers: res.headers, body: Buffer.concat(chunks) }));
    });
    req.on('error', reject);
    req.end();
  });
}
