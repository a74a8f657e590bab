import { createHash } from 'node:crypto';
import { API_KEY_DETECTOR } from './api-key.detector';

const MARKER = '[REDACTED:API_KEY]';

/** Random-looking base62 text of `length` characters, the same on every run. */
function base62(seed: string, length: number): string {
  let text = '';
  for (let round = 0; text.length < length; round++) {
    text += createHash('sha256')
      .update(`${seed}:${round}`)
      .digest('base64')
      .replace(/[^A-Za-z0-9]/g, '');
  }
  return text.slice(0, length);
}

function redact(text: string): { text: string; count: number } {
  const tally = { redactions: 0 };
  return { text: API_KEY_DETECTOR.redact(text, tally), count: tally.redactions };
}

const KEYS: Array<[string, string]> = [
  ['OpenAI legacy', `sk-${base62('openai', 48)}`],
  ['OpenAI project', `sk-proj-${base62('proj', 74)}_${base62('proj2', 80)}`],
  ['OpenAI service account', `sk-svcacct-${base62('svc', 60)}`],
  ['Anthropic', `sk-ant-api03-${base62('ant', 93)}AA`],
  ['AWS access key id', 'AKIAIOSFODNN7EXAMPLE'],
  ['AWS temporary key id', `ASIA${base62('asia', 16).toUpperCase()}`],
  ['GitHub personal token', `ghp_${base62('ghp', 36)}`],
  ['GitHub OAuth token', `gho_${base62('gho', 36)}`],
  ['GitHub user-to-server token', `ghu_${base62('ghu', 36)}`],
  ['GitHub server-to-server token', `ghs_${base62('ghs', 36)}`],
  ['GitHub refresh token', `ghr_${base62('ghr', 36)}`],
  ['GitHub fine-grained token', `github_pat_${base62('pat', 22)}_${base62('pat2', 59)}`],
  ['Google API key', `AIza${base62('google', 35)}`],
  ['Stripe live secret key', `sk_live_${base62('stripe', 24)}`],
  ['Stripe restricted key', `rk_live_${base62('rk', 24)}`],
  ['Stripe test key', `sk_test_${base62('test', 24)}`],
  ['Slack bot token', `xoxb-123456789012-1234567890123-${base62('slack', 24)}`],
  ['Slack user token', `xoxp-123456789012-123456789012-123456789012-${base62('xoxp', 32)}`],
];

describe('API_KEY detector', () => {
  it.each(KEYS)('replaces a %s', (_, key) => {
    expect(redact(`export KEY=${key}\n`)).toEqual({ text: `export KEY=${MARKER}\n`, count: 1 });
    expect(redact(`{"api_key":"${key}"}`)).toEqual({ text: `{"api_key":"${MARKER}"}`, count: 1 });
  });

  it('counts every key', () => {
    const text = KEYS.map(([, key]) => key).join(' ');
    expect(redact(text)).toEqual({ text: KEYS.map(() => MARKER).join(' '), count: KEYS.length });
  });

  it.each([
    ['a hyphenated word after sk-', 'pip install sk-learn-model-selection-utilities-extra'],
    ['sk- inside a word', `task-${base62('task', 40)}`],
    ['an AWS-like prefix in a longer word', 'ASIAPACIFIC2024REGIONS'],
    ['a short AWS-like word', 'AKIA1234'],
    ['a Stripe publishable key', `pk_live_${base62('pk', 24)}`],
    ['a GitHub prefix with a short tail', 'ghp_short'],
    ['a Google-like prefix with a short tail', 'AIzaSyShort'],
  ])('leaves %s alone', (_, text) => {
    expect(redact(text)).toEqual({ text, count: 0 });
  });

  it('stays linear on a long run of prefixes', () => {
    const text = 'sk-'.repeat(200_000);
    const started = performance.now();
    redact(text);
    expect(performance.now() - started).toBeLessThan(1000);
  });
});
