import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';

/** Debian's chromium (installed by .ci/run), or '' when it is not installed. */
export const CHROMIUM = spawnSync('sh', ['-c', 'command -v chromium']).stdout.toString().trim();

/** The flags a sandboxed, offline machine needs (as in waterfall.int-spec.ts), and nothing that would reach the network by itself. */
const FLAGS = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--no-default-browser-check',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
  '--disable-extensions',
  '--disable-features=Translate,OptimizationHints,MediaRouter',
  '--window-size=1400,900',
];

type Listener = (params: Record<string, unknown>) => void;

/** One tab, driven through the Chrome DevTools Protocol (flattened session of its target). */
export interface Tab {
  send<T = Record<string, unknown>>(method: string, params?: Record<string, unknown>): Promise<T>;
  on(event: string, listener: Listener): void;
  /** Evaluates an expression in the page (awaiting a promise) and returns its value. */
  evaluate<T>(expression: string): Promise<T>;
}

/**
 * A headless Chromium with a minimal DevTools Protocol client over the WebSocket it opens: enough
 * to record every request a page makes, type into it and read it back, with no browser download
 * and no library.
 */
export class HeadlessChromium {
  private nextId = 1;
  private readonly pending = new Map<number, { resolve: (v: unknown) => void; reject: (e: Error) => void; method: string }>();
  private readonly listeners = new Map<string, Listener[]>();

  private constructor(
    private readonly process: ChildProcess,
    private readonly socket: WebSocket,
    private readonly profile: string,
  ) {
    socket.addEventListener('message', (event) => this.receive(String(event.data)));
  }

  static async launch(): Promise<HeadlessChromium> {
    if (!CHROMIUM) throw new Error('chromium is not installed (apt-get install chromium)');
    const profile = mkdtempSync(path.join(os.tmpdir(), 'chromium-cdp-'));
    const child = spawn(CHROMIUM, [...FLAGS, '--remote-debugging-port=0', `--user-data-dir=${profile}`, 'about:blank'], {
      stdio: ['ignore', 'ignore', 'pipe'],
    });
    const url = await new Promise<string>((resolve, reject) => {
      let stderr = '';
      const timer = setTimeout(() => reject(new Error(`chromium did not open DevTools within 30 s:\n${stderr}`)), 30_000);
      child.stderr!.on('data', (chunk: Buffer) => {
        stderr += chunk.toString();
        const found = /DevTools listening on (ws:\/\/\S+)/.exec(stderr);
        if (found) {
          clearTimeout(timer);
          resolve(found[1]!);
        }
      });
      child.once('exit', (code) => {
        clearTimeout(timer);
        reject(new Error(`chromium exited with ${code}:\n${stderr}`));
      });
    });
    const socket = new WebSocket(url);
    await new Promise<void>((resolve, reject) => {
      socket.addEventListener('open', () => resolve(), { once: true });
      socket.addEventListener('error', () => reject(new Error(`could not connect to ${url}`)), { once: true });
    });
    return new HeadlessChromium(child, socket, profile);
  }

  /** A new tab, attached, with the Page, Runtime, Network and Log domains on. */
  async newTab(): Promise<Tab> {
    const { targetId } = await this.call<{ targetId: string }>('Target.createTarget', { url: 'about:blank' });
    const { sessionId } = await this.call<{ sessionId: string }>('Target.attachToTarget', { targetId, flatten: true });
    const tab: Tab = {
      send: (method, params) => this.call(method, params, sessionId),
      on: (event, listener) => {
        const key = `${sessionId}:${event}`;
        this.listeners.set(key, [...(this.listeners.get(key) ?? []), listener]);
      },
      evaluate: async <T>(expression: string) => {
        const result = await this.call<{ result: { value: T }; exceptionDetails?: { text: string; exception?: { description?: string } } }>(
          'Runtime.evaluate',
          { expression, awaitPromise: true, returnByValue: true },
          sessionId,
        );
        if (result.exceptionDetails)
          throw new Error(`page threw: ${result.exceptionDetails.exception?.description ?? result.exceptionDetails.text}`);
        return result.result.value;
      },
    };
    for (const domain of ['Page', 'Runtime', 'Network', 'Log']) await tab.send(`${domain}.enable`);
    return tab;
  }

  /** Asks the browser to close, then makes sure it has: nothing of it outlives the test. */
  async close(): Promise<void> {
    const exited = new Promise((resolve) => (this.process.exitCode === null ? this.process.once('exit', resolve) : resolve(undefined)));
    const within = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms).unref());
    // The browser may drop the connection while closing, before it answers: then it is killed below.
    const asked = this.call('Browser.close').catch((error: unknown) =>
      process.stderr.write(
        `chromium: Browser.close got no answer (${error instanceof Error ? error.message : String(error)}); it is killed if still running\n`,
      ),
    );
    await Promise.race([asked, within(5_000)]);
    await Promise.race([exited, within(5_000)]);
    if (this.process.exitCode === null && this.process.signalCode === null) this.process.kill('SIGKILL');
    this.socket.close();
    this.process.stderr?.destroy();
    rmSync(this.profile, { recursive: true, force: true });
  }

  private call<T>(method: string, params: Record<string, unknown> = {}, sessionId?: string): Promise<T> {
    const id = this.nextId++;
    this.socket.send(JSON.stringify({ id, method, params, ...(sessionId ? { sessionId } : {}) }));
    return new Promise<T>((resolve, reject) => this.pending.set(id, { resolve: resolve as (v: unknown) => void, reject, method }));
  }

  private receive(data: string): void {
    const message = JSON.parse(data) as {
      id?: number;
      result?: unknown;
      error?: { message: string };
      method?: string;
      params?: Record<string, unknown>;
      sessionId?: string;
    };
    if (message.id !== undefined) {
      const waiting = this.pending.get(message.id);
      this.pending.delete(message.id);
      if (message.error) waiting?.reject(new Error(`${waiting.method}: ${message.error.message}`));
      else waiting?.resolve(message.result);
      return;
    }
    for (const listener of this.listeners.get(`${message.sessionId}:${message.method}`) ?? []) listener(message.params ?? {});
  }
}

/** Polls `check` until it returns a value other than undefined, or throws what it saw last after `timeoutMs`. */
export async function waitFor<T>(what: string, check: () => Promise<T | undefined>, timeoutMs = 20_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  let last: unknown;
  while (Date.now() < deadline) {
    try {
      const value = await check();
      if (value !== undefined) return value;
    } catch (error) {
      last = error;
    }
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  throw new Error(`timed out waiting for ${what}${last ? `: ${String(last)}` : ''}`);
}
