import { checkWebhookUrl, describeFetchFailure } from './webhook.delivery';

describe('checkWebhookUrl (SSRF guard)', () => {
  it.each(['http://127.0.0.1:8080/hook', 'http://10.1.2.3/hook', 'http://[::1]/hook', 'http://169.254.169.254/latest/meta-data', 'http://localhost/hook'])(
    'refuses %s unless private webhooks are allowed',
    async (url) => {
      expect(await checkWebhookUrl(url, false)).toMatch(/private|loopback|local/i);
      expect(await checkWebhookUrl(url, true)).toBeUndefined();
    },
  );

  it('refuses other schemes even when private webhooks are allowed', async () => {
    expect(await checkWebhookUrl('ftp://example.com/hook', true)).toBeDefined();
    expect(await checkWebhookUrl('file:///etc/passwd', true)).toBeDefined();
  });
});

describe('describeFetchFailure', () => {
  it("names the reason fetch hides in its cause: a refused connection, a DNS failure, a timeout", () => {
    const refused = Object.assign(new TypeError('fetch failed'), { cause: Object.assign(new Error('connect ECONNREFUSED 10.0.0.5:443'), { code: 'ECONNREFUSED' }) });
    expect(describeFetchFailure(refused)).toBe('fetch failed (ECONNREFUSED)');
    const tls = Object.assign(new TypeError('fetch failed'), { cause: new Error('unable to verify the first certificate') });
    expect(describeFetchFailure(tls)).toBe('fetch failed (unable to verify the first certificate)');
    expect(describeFetchFailure(Object.assign(new Error('The operation was aborted due to timeout'), { name: 'TimeoutError' }))).toBe('no answer within 10 s');
    expect(describeFetchFailure(new Error('something else'))).toBe('something else');
  });
});
