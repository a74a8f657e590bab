import { JWT_DETECTOR } from './jwt.detector';

const MARKER = '[REDACTED:JWT]';
const segment = (value: object) => Buffer.from(JSON.stringify(value)).toString('base64url');
const HEADER = segment({ alg: 'HS256', typ: 'JWT' });
const PAYLOAD = segment({ sub: '1234567890', name: 'John Doe', email: 'john@example.com', iat: 1516239022 });
const SIGNATURE = Buffer.from('not a real signature, 32 bytes!!').toString('base64url');
const TOKEN = `${HEADER}.${PAYLOAD}.${SIGNATURE}`;

function redact(text: string): { text: string; count: number } {
  const tally = { redactions: 0 };
  return { text: JWT_DETECTOR.redact(text, tally), count: tally.redactions };
}

describe('JWT detector', () => {
  it('starts every header with eyJ, the encoding of {"', () => {
    expect(HEADER.startsWith('eyJ')).toBe(true);
  });

  it.each([
    ['a bearer header', `Authorization: Bearer ${TOKEN}`, `Authorization: Bearer ${MARKER}`],
    ['a JSON value', `{"token":"${TOKEN}"}`, `{"token":"${MARKER}"}`],
    ['a query string', `https://x.test/cb?id_token=${TOKEN}&state=1`, `https://x.test/cb?id_token=${MARKER}&state=1`],
    ['an unsigned token', `${segment({ alg: 'none' })}.${PAYLOAD}. next`, `${MARKER} next`],
    ['a JWE (five segments)', `${segment({ alg: 'RSA-OAEP', enc: 'A256GCM' })}.a2V5.aXY.Y2lwaGVy.dGFn done`, `${MARKER} done`],
  ])('replaces a token in %s', (_, text, expected) => {
    expect(redact(text)).toEqual({ text: expected, count: 1 });
  });

  it('counts each token', () => {
    expect(redact(`${TOKEN} and ${TOKEN}`)).toEqual({ text: `${MARKER} and ${MARKER}`, count: 2 });
  });

  it.each([
    ['eyJ alone', 'the prefix eyJ means {"'],
    ['two segments', `${HEADER}.${PAYLOAD}`],
    ['a token glued to a word', `x${TOKEN}`],
    ['a header too short to be one', 'eyJhbGc.eyJzdWI.c2ln'],
    ['an empty payload', `${HEADER}..${SIGNATURE}`],
  ])('leaves %s alone', (_, text) => {
    expect(redact(text)).toEqual({ text, count: 0 });
  });

  it('reads a long run of eyJ without a dot once', () => {
    const text = 'eyJ'.repeat(300_000);
    const started = performance.now();
    expect(redact(text).count).toBe(0);
    expect(performance.now() - started).toBeLessThan(1000);
  });
});
