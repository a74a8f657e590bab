import { lookup } from 'node:dns/promises';
import http from 'node:http';
import { hostname } from 'node:os';
import type { AddressInfo } from 'node:net';
import tls from 'node:tls';
import { Readable } from 'node:stream';
import { createGzip } from 'node:zlib';
import { ipIsPrivate, webhookUrlProblem } from '@spanforge/reports';
import {
  checkWebhookUrl,
  deliverWebhook,
  describeFetchFailure,
  pinnedLookup,
  postWebhook,
  type ResolvedAddress,
  type Resolver,
} from './webhook.delivery';

describe('checkWebhookUrl (SSRF guard)', () => {
  it.each([
    'http://127.0.0.1:8080/hook',
    'http://10.1.2.3/hook',
    'http://[::1]/hook',
    'http://169.254.169.254/latest/meta-data',
    'http://localhost/hook',
  ])('refuses %s unless private webhooks are allowed', async (url) => {
    expect(await checkWebhookUrl(url, false)).toMatch(/private|loopback|local/i);
    expect(await checkWebhookUrl(url, true)).toBeUndefined();
  });

  it('refuses other schemes even when private webhooks are allowed', async () => {
    expect(await checkWebhookUrl('ftp://example.com/hook', true)).toBeDefined();
    expect(await checkWebhookUrl('file:///etc/passwd', true)).toBeDefined();
  });

  it('checks every address a name resolves to, and says why a name does not resolve', async () => {
    const answers =
      (addresses: ResolvedAddress[]): Resolver =>
      async () =>
        addresses;
    expect(await checkWebhookUrl('https://hooks.example/x', false, answers([{ address: '93.184.215.14', family: 4 }]))).toBeUndefined();
    const mixed = answers([
      { address: '93.184.215.14', family: 4 },
      { address: '10.0.0.7', family: 4 },
    ]);
    expect(await checkWebhookUrl('https://hooks.example/x', false, mixed)).toMatch(/resolves to a private address \(hooks\.example\)/);
    // The refused address itself is not named: the message would tell how internal names resolve.
    expect(await checkWebhookUrl('https://hooks.example/x', false, mixed)).not.toContain('10.0.0.7');
    expect(await checkWebhookUrl('https://hooks.example/x', false, answers([{ address: '::ffff:127.0.0.1', family: 6 }]))).toMatch(
      /private/,
    );
    expect(await checkWebhookUrl('https://hooks.example/x', false, answers([]))).toMatch(/does not resolve \(no addresses\)/);
    const notFound: Resolver = async () => {
      throw Object.assign(new Error('getaddrinfo ENOTFOUND hooks.example'), { code: 'ENOTFOUND' });
    };
    expect(await checkWebhookUrl('https://hooks.example/x', false, notFound)).toBe(
      'webhookUrl host hooks.example does not resolve (ENOTFOUND)',
    );
  });
});

describe('describeFetchFailure', () => {
  it('names the reason fetch hides in its cause: a refused connection, a DNS failure, a timeout', () => {
    const refused = Object.assign(new TypeError('fetch failed'), {
      cause: Object.assign(new Error('connect ECONNREFUSED 10.0.0.5:443'), { code: 'ECONNREFUSED' }),
    });
    expect(describeFetchFailure(refused)).toBe('fetch failed (ECONNREFUSED)');
    const tlsFailure = Object.assign(new TypeError('fetch failed'), { cause: new Error('unable to verify the first certificate') });
    expect(describeFetchFailure(tlsFailure)).toBe('fetch failed (unable to verify the first certificate)');
    expect(describeFetchFailure(Object.assign(new Error('The operation was aborted due to timeout'), { name: 'TimeoutError' }))).toBe(
      'no answer within 10 s',
    );
    expect(describeFetchFailure(new Error('something else'))).toBe('something else');
  });

  it('reads the reasons of an AggregateError with no message (IPv6 and IPv4 both refused)', () => {
    const both = Object.assign(
      new AggregateError(
        [
          Object.assign(new Error('connect ECONNREFUSED ::1:80'), { code: 'ECONNREFUSED' }),
          Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:80'), { code: 'ECONNREFUSED' }),
        ],
        '',
      ),
      { code: 'ECONNREFUSED' },
    );
    expect(describeFetchFailure(both)).toBe('connect ECONNREFUSED ::1:80; connect ECONNREFUSED 127.0.0.1:80');
  });
});

describe('pinnedLookup', () => {
  const addresses = [
    { address: '93.184.215.14', family: 4 },
    { address: '2606:2800:21f:cb07:6820:80da:af6b:8b2c', family: 6 },
  ];
  const ask = (host: string, options: { family?: number; all?: boolean }) =>
    new Promise<{ error: NodeJS.ErrnoException | null; address: unknown; family?: number }>((resolve) =>
      pinnedLookup('hooks.example', addresses)(host, options, (error, address, family) => resolve({ error, address, family })),
    );

  it('answers only the checked addresses, in either form Node asks for', async () => {
    expect(await ask('hooks.example', { all: true })).toEqual({ error: null, address: addresses, family: undefined });
    expect(await ask('hooks.example', {})).toEqual({ error: null, address: '93.184.215.14', family: 4 });
    expect(await ask('HOOKS.example', { family: 6 })).toEqual({ error: null, address: addresses[1]!.address, family: 6 });
  });

  it('answers nothing for another host name', async () => {
    const answer = await ask('elsewhere.example', { all: true });
    expect(answer.error?.code).toBe('ENOTFOUND');
  });
});

/** A local receiver; `handler` answers, every request is counted with its headers. */
async function receiver(handler: (request: http.IncomingMessage, response: http.ServerResponse) => void, address = '127.0.0.1') {
  const requests: http.IncomingHttpHeaders[] = [];
  const server = http.createServer((request, response) => {
    requests.push(request.headers);
    handler(request, response);
  });
  await new Promise<void>((resolve) => server.listen(0, address, resolve));
  const { port } = server.address() as AddressInfo;
  return {
    port,
    requests,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** An answer that never ends: `chunk` again and again, as fast as the receiver's socket takes it. */
function endless(chunk: Buffer): Readable {
  return new Readable({
    read() {
      while (this.push(chunk));
    },
  });
}

const LOCAL = [{ address: '127.0.0.1', family: 4 }];

/** A name of this machine that the system resolver maps to a (private) address of its own, if there is one. */
async function systemResolvedLocalName(): Promise<{ name: string; address: string; family: number } | undefined> {
  for (const name of [hostname(), 'ip6-localhost']) {
    if (webhookUrlProblem(`http://${name}/`, false)) continue;
    let found: { address: string; family: number };
    try {
      found = await lookup(name);
    } catch {
      // A name this machine cannot resolve is simply not usable here: try the next.
      continue;
    }
    if (ipIsPrivate(found.address)) return { name, ...found };
  }
  return undefined;
}
const SIGNED = { 'content-type': 'application/json' };

describe('postWebhook', () => {
  it('connects to the checked address while the Host header keeps the URL host name, and asks for no compression', async () => {
    const r = await receiver((request, response) => {
      request.resume();
      request.on('end', () => response.writeHead(204).end());
    });
    try {
      // receiver.invalid resolves nowhere: the only way to reach the server is the pinned address.
      const answer = await postWebhook(new URL(`http://receiver.invalid:${r.port}/hook`), {
        addresses: LOCAL,
        headers: SIGNED,
        body: '{}',
        signal: AbortSignal.timeout(5_000),
        maxResponseBytes: 4_096,
      });
      expect(answer.status).toBe(204);
      expect(r.requests).toHaveLength(1);
      expect(r.requests[0]!.host).toBe(`receiver.invalid:${r.port}`);
      expect(r.requests[0]!['accept-encoding']).toBe('identity');
    } finally {
      await r.close();
    }
  });

  it('keeps the URL host name as the TLS server name (SNI) when it connects to the checked address', async () => {
    const serverNames: string[] = [];
    // No certificate at all: the handshake is refused right after the ClientHello, which carries the name.
    const server = tls.createServer({
      SNICallback: (name, callback) => {
        serverNames.push(name);
        callback(new Error('no certificate here'), undefined);
      },
    });
    const refusals: string[] = [];
    server.on('tlsClientError', (error) => refusals.push(error.message));
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const { port } = server.address() as AddressInfo;
    try {
      await expect(
        postWebhook(new URL(`https://receiver.invalid:${port}/hook`), {
          addresses: LOCAL,
          headers: SIGNED,
          body: '{}',
          signal: AbortSignal.timeout(5_000),
          maxResponseBytes: 4_096,
        }),
      ).rejects.toThrow();
      expect(serverNames).toEqual(['receiver.invalid']);
      expect(refusals).toEqual(['no certificate here']);
    } finally {
      await new Promise<void>((resolve) => server.close(() => resolve()));
    }
  });

  it('reads at most the cap of an endless answer, then hangs up', async () => {
    const r = await receiver((request, response) => {
      request.resume();
      response.writeHead(500, { 'content-type': 'text/plain' });
      endless(Buffer.alloc(16_384, 'x')).pipe(response);
    });
    try {
      const started = performance.now();
      const answer = await postWebhook(new URL(`http://receiver.invalid:${r.port}/hook`), {
        addresses: LOCAL,
        headers: SIGNED,
        body: '{}',
        signal: AbortSignal.timeout(10_000),
        maxResponseBytes: 4_096,
      });
      expect(performance.now() - started).toBeLessThan(2_000);
      expect(answer).toMatchObject({ status: 500, truncated: true });
      expect(answer.body.length).toBe(4_096);
    } finally {
      await r.close();
    }
  });

  it('never inflates a gzip bomb: the compressed bytes are read, up to the cap', async () => {
    const r = await receiver((request, response) => {
      request.resume();
      // Ignores accept-encoding: identity and sends gzip of endless zeros (about 1000:1).
      response.writeHead(500, { 'content-encoding': 'gzip', 'content-type': 'application/json' });
      endless(Buffer.alloc(1 << 20))
        .pipe(createGzip())
        .pipe(response);
    });
    try {
      const started = performance.now();
      const answer = await postWebhook(new URL(`http://receiver.invalid:${r.port}/hook`), {
        addresses: LOCAL,
        headers: SIGNED,
        body: '{}',
        signal: AbortSignal.timeout(10_000),
        maxResponseBytes: 4_096,
      });
      expect(performance.now() - started).toBeLessThan(2_000);
      expect(answer.truncated).toBe(true);
      expect(answer.body.length).toBe(4_096);
      expect([...answer.body.subarray(0, 2)]).toEqual([0x1f, 0x8b]);
    } finally {
      await r.close();
    }
  });
});

describe('deliverWebhook', () => {
  it('delivers a signed report to an IP literal, checked as such and resolved by nobody', async () => {
    const r = await receiver((request, response) => {
      request.resume();
      request.on('end', () => response.writeHead(200).end('ok'));
    });
    let lookups = 0;
    const resolve: Resolver = async () => {
      lookups++;
      return LOCAL;
    };
    try {
      const result = await deliverWebhook(`http://127.0.0.1:${r.port}/hook`, 'whsec_test', 'report-1', '{"a":1}', true, { resolve });
      expect(result).toEqual({ ok: true });
      expect(lookups).toBe(0);
      expect(r.requests[0]!['spanforge-report-id']).toBe('report-1');
      expect(r.requests[0]!['accept-encoding']).toBe('identity');
    } finally {
      await r.close();
    }
  });

  it('does not follow DNS rebinding: a name public at the check and private later never reaches the private address', async () => {
    // The "later" answer comes from the injected resolver and, where this machine's name resolves
    // to one of its own addresses (/etc/hosts), from the system resolver as well: the receiver
    // listens there, so a delivery that resolved the name again, either way, would reach it.
    const local = await systemResolvedLocalName();
    const r = await receiver((request, response) => {
      request.resume();
      response.writeHead(200).end();
    }, local?.address);
    const host = local ? local.name : 'rebind.example';
    let lookups = 0;
    // First answer public (what the guard checks), every later one the receiver. The public one is in
    // 2d00::/8, global unicast that IANA has not allocated: nobody answers there, so the attempt just
    // runs out of time (or finds no route) without reaching anyone.
    const rebinding: Resolver = async () =>
      ++lookups === 1 ? [{ address: '2d00::1', family: 6 }] : [{ address: local?.address ?? '127.0.0.1', family: local?.family ?? 4 }];
    try {
      const result = await deliverWebhook(`http://${host}:${r.port}/hook`, 'whsec_test', 'report-2', '{}', false, {
        resolve: rebinding,
        timeoutMs: 500,
      });
      expect(result.ok).toBe(false);
      expect(lookups).toBe(1);
      expect(r.requests).toHaveLength(0);
    } finally {
      await r.close();
    }
  });

  it('answers promptly with the start of an endless error answer', async () => {
    const r = await receiver((request, response) => {
      request.resume();
      response.writeHead(503, { 'content-type': 'text/plain' });
      response.write('receiver overloaded\n\u0000');
      endless(Buffer.alloc(16_384, 'y')).pipe(response);
    });
    try {
      const started = performance.now();
      const result = await deliverWebhook(`http://127.0.0.1:${r.port}/hook`, 'whsec_test', 'report-3', '{}', true);
      expect(performance.now() - started).toBeLessThan(2_000);
      expect(result.ok).toBe(false);
      expect(result.error).toMatch(/^webhook answered 503: receiver overloaded y+…$/);
      expect(result.error!.length).toBeLessThan(250);
    } finally {
      await r.close();
    }
  });

  it('does not show a compressed error answer', async () => {
    const r = await receiver((request, response) => {
      request.resume();
      response.writeHead(500, { 'content-encoding': 'gzip' });
      endless(Buffer.alloc(1 << 20))
        .pipe(createGzip())
        .pipe(response);
    });
    try {
      const result = await deliverWebhook(`http://127.0.0.1:${r.port}/hook`, 'whsec_test', 'report-4', '{}', true);
      expect(result).toEqual({ ok: false, error: 'webhook answered 500: (a gzip-encoded answer, not shown)' });
    } finally {
      await r.close();
    }
  });

  it('gives up on a receiver that never answers, at the time limit', async () => {
    const r = await receiver(() => undefined);
    try {
      const started = performance.now();
      const result = await deliverWebhook(`http://127.0.0.1:${r.port}/hook`, 'whsec_test', 'report-5', '{}', true, { timeoutMs: 300 });
      expect(performance.now() - started).toBeLessThan(1_500);
      expect(result).toEqual({ ok: false, error: 'webhook unreachable: no answer within 0.3 s' });
    } finally {
      await r.close();
    }
  });

  it('gives up on a receiver that stalls its error answer, with what arrived', async () => {
    const r = await receiver((request, response) => {
      request.resume();
      response.writeHead(502, { 'content-type': 'text/plain' });
      response.write('bad gateway, and then nothing');
    });
    try {
      const result = await deliverWebhook(`http://127.0.0.1:${r.port}/hook`, 'whsec_test', 'report-6', '{}', true, { timeoutMs: 300 });
      expect(result).toEqual({ ok: false, error: 'webhook answered 502: bad gateway, and then nothing…' });
    } finally {
      await r.close();
    }
  });
});
