import { createHmac } from 'node:crypto';
import { DEFAULT_WEBHOOK_TOLERANCE_SECONDS, signWebhook, verifyWebhookSignature, webhookUrlProblem } from './webhook';

describe('signWebhook / verifyWebhookSignature', () => {
  const body = JSON.stringify({ id: 'rep_1', totals: { costUsd: 12.5 }, note: 'café ☕' });
  const secret = 'whsec_test_4f1d';
  const sentAt = 1_717_200_000;
  const tolerance = DEFAULT_WEBHOOK_TOLERANCE_SECONDS;

  it('is t=<ts>,v1=<hex HMAC-SHA256 of "<ts>.<body>">', () => {
    const expected = createHmac('sha256', secret)
      .update(Buffer.from(`${sentAt}.${body}`, 'utf8'))
      .digest('hex');
    expect(signWebhook(body, secret, sentAt)).toBe(`t=${sentAt},v1=${expected}`);
  });

  it('verifies its own signature within the tolerance, either side of now', () => {
    const header = signWebhook(body, secret, sentAt);
    expect(verifyWebhookSignature(body, header, secret, tolerance, sentAt)).toBe(true);
    expect(verifyWebhookSignature(body, header, secret, tolerance, sentAt + tolerance)).toBe(true);
    expect(verifyWebhookSignature(body, header, secret, tolerance, sentAt - tolerance)).toBe(true);
  });

  it('refuses a changed body, another secret, or a replay outside the tolerance', () => {
    const header = signWebhook(body, secret, sentAt);
    expect(verifyWebhookSignature(body.replace('12.5', '1.25'), header, secret, tolerance, sentAt)).toBe(false);
    expect(verifyWebhookSignature(body, header, 'whsec_other', tolerance, sentAt)).toBe(false);
    expect(verifyWebhookSignature(body, header, secret, tolerance, sentAt + tolerance + 1)).toBe(false);
    expect(verifyWebhookSignature(body, header, secret, tolerance, sentAt - tolerance - 1)).toBe(false);
  });

  it('refuses a signature moved to another timestamp (the timestamp is signed)', () => {
    const [, v1] = signWebhook(body, secret, sentAt).split(',');
    expect(verifyWebhookSignature(body, `t=${sentAt + 1},${v1}`, secret, tolerance, sentAt)).toBe(false);
  });

  it('accepts any one matching v1 among several (secret rotation), with spaces and upper-case hex', () => {
    const current = signWebhook(body, secret, sentAt).split('v1=')[1];
    const stale = signWebhook(body, 'whsec_old', sentAt).split('v1=')[1];
    expect(verifyWebhookSignature(body, `t=${sentAt}, v1=${stale}, v1=${current.toUpperCase()}`, secret, tolerance, sentAt)).toBe(true);
  });

  it.each([
    '',
    'garbage',
    `t=${sentAt}`,
    'v1=abcd',
    `t=abc,v1=${'0'.repeat(64)}`,
    `t=${sentAt},v1=${'0'.repeat(63)}`,
    `t=${sentAt},v1=${'zz'.repeat(32)}`,
  ])('is false, not an exception, for the malformed header %p', (header) => {
    expect(verifyWebhookSignature(body, header, secret, tolerance, sentAt)).toBe(false);
  });

  it('refuses a timestamp that is not whole Unix seconds', () => {
    expect(() => signWebhook(body, secret, 1.5)).toThrow(RangeError);
    expect(() => signWebhook(body, secret, Date.now() * 1e6)).toThrow(RangeError);
  });
});

describe('webhookUrlProblem', () => {
  it.each([
    'https://hooks.example.com/spanforge',
    'http://example.com:8080/a?b=c',
    'https://8.8.8.8/',
    'https://[2606:4700:4700::1111]/',
    'https://[::ffff:8.8.8.8]/',
  ])('accepts the public target %p', (url) => {
    expect(webhookUrlProblem(url, false)).toBeUndefined();
  });

  it.each([
    ['', 'webhook URL is empty'],
    ['not a url', 'webhook URL "not a url" is not a valid absolute URL'],
    ['/relative/path', 'webhook URL "/relative/path" is not a valid absolute URL'],
    ['ftp://example.com/x', 'webhook URL must use http or https, not ftp'],
    ['file:///etc/passwd', 'webhook URL must use http or https, not file'],
    ['javascript:alert(1)', 'webhook URL must use http or https, not javascript'],
    [
      'https://user:pass@example.com/',
      'webhook URL must not contain a user name or password; deliveries are authenticated by their signature',
    ],
    ['https://token@example.com/', 'webhook URL must not contain a user name or password; deliveries are authenticated by their signature'],
    [`https://example.com/${'a'.repeat(2048)}`, 'webhook URL is longer than 2048 characters'],
  ])('refuses %p even when private targets are allowed', (url, problem) => {
    expect(webhookUrlProblem(url, false)).toBe(problem);
    expect(webhookUrlProblem(url, true)).toBe(problem);
  });

  it.each(['http://localhost/', 'http://LOCALHOST:3000/', 'http://localhost./', 'http://api.localhost/', 'http://a.b.localhost./'])(
    'refuses localhost names: %p',
    (url) => {
      expect(webhookUrlProblem(url, false)).toMatch(
        /^webhook URL points at localhost \(.*\); private webhook targets are not allowed on this server \(ALLOW_PRIVATE_WEBHOOKS=true allows them, for development\)$/,
      );
    },
  );

  it.each([
    ['http://127.0.0.1/', '127.0.0.1'],
    ['http://127.255.255.254:9000/', '127.255.255.254'],
    ['http://10.1.2.3/', '10.1.2.3'],
    ['http://172.16.0.1/', '172.16.0.1'],
    ['http://172.31.255.255/', '172.31.255.255'],
    ['http://192.168.1.10/', '192.168.1.10'],
    ['http://169.254.169.254/latest/meta-data/', '169.254.169.254'],
    ['http://100.64.0.1/', '100.64.0.1'],
    ['http://100.127.255.255/', '100.127.255.255'],
    ['http://0.0.0.0/', '0.0.0.0'],
    ['http://0/', '0.0.0.0'],
    ['http://224.0.0.1/', '224.0.0.1'],
    ['http://255.255.255.255/', '255.255.255.255'],
    ['http://240.0.0.1/', '240.0.0.1'],
    ['http://192.0.2.7/', '192.0.2.7'],
    ['http://198.18.0.1/', '198.18.0.1'],
    // Other spellings of loopback, canonicalised by the URL parser to what a client connects to.
    ['http://2130706433/', '127.0.0.1'],
    ['http://0x7f.1/', '127.0.0.1'],
    ['http://0177.0.0.1/', '127.0.0.1'],
    ['http://0x7f000001/', '127.0.0.1'],
    ['http://127.1/', '127.0.0.1'],
    ['http://127.0.0.1./', '127.0.0.1'],
    ['http://%31%32%37.0.0.1/', '127.0.0.1'],
    ['http://[::1]/', '[::1]'],
    ['http://[0:0:0:0:0:0:0:1]:8080/', '[::1]'],
    ['http://[::]/', '[::]'],
    ['http://[::ffff:127.0.0.1]/', '[::ffff:7f00:1]'],
    ['http://[::ffff:10.0.0.1]/', '[::ffff:a00:1]'],
    ['http://[::ffff:169.254.169.254]/', '[::ffff:a9fe:a9fe]'],
    ['http://[fc00::1]/', '[fc00::1]'],
    ['http://[fd12:3456:789a::1]/', '[fd12:3456:789a::1]'],
    ['http://[fe80::1]/', '[fe80::1]'],
    ['http://[febf::1]/', '[febf::1]'],
    ['http://[ff02::1]/', '[ff02::1]'],
    ['http://[64:ff9b::7f00:1]/', '[64:ff9b::7f00:1]'],
    ['http://[2002:7f00:1::]/', '[2002:7f00:1::]'],
  ])('refuses the private address in %p (seen as %s) unless private targets are allowed', (url, seenAs) => {
    expect(webhookUrlProblem(url, false)).toBe(
      `webhook URL points at ${seenAs}, a loopback, private, link-local or reserved address; private webhook targets are not allowed on this server (ALLOW_PRIVATE_WEBHOOKS=true allows them, for development)`,
    );
    expect(webhookUrlProblem(url, true)).toBeUndefined();
  });

  it('leaves host names to the caller, who checks the addresses DNS returns', () => {
    expect(webhookUrlProblem('http://internal.corp.example/', false)).toBeUndefined();
  });
});
