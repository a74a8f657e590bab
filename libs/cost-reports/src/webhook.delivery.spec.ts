import { checkWebhookUrl } from './webhook.delivery';

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
