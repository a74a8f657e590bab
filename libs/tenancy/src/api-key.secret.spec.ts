import { credentialFrom, generateSecret, hashSecret, newSalt, parseSecret, secretMatches, tokensEqual } from './api-key.secret';

describe('API key secrets', () => {
  it('have a recognisable prefix and at least 32 random bytes', () => {
    const { secret, lookupId, displayPrefix } = generateSecret();
    expect(secret.startsWith(`${displayPrefix}_`)).toBe(true);
    expect(displayPrefix).toBe(`sf_${lookupId}`);
    const randomPart = secret.slice(displayPrefix.length + 1);
    expect(Buffer.from(randomPart, 'base64url')).toHaveLength(32);
  });

  it('are never the same twice', () => {
    const seen = new Set(Array.from({ length: 200 }, () => generateSecret().secret));
    expect(seen.size).toBe(200);
  });

  it('parse back to their lookup id and reject anything else', () => {
    const { secret, lookupId } = generateSecret();
    expect(parseSecret(secret)).toEqual({ lookupId, secret });
    expect(parseSecret(`${secret}x`)).toBeUndefined();
    expect(parseSecret('Bearer ' + secret)).toBeUndefined();
    expect(parseSecret("sf_0123456789ab_' OR 1=1 --")).toBeUndefined();
  });

  it('match only their own salted, peppered hash', () => {
    const { secret } = generateSecret();
    const salt = newSalt();
    const hash = hashSecret(secret, salt, 'pepper-one-pepper-one');
    expect(secretMatches(secret, salt, hash, 'pepper-one-pepper-one')).toBe(true);
    expect(secretMatches(secret, salt, hash, 'pepper-two-pepper-two')).toBe(false);
    expect(secretMatches(secret, newSalt(), hash, 'pepper-one-pepper-one')).toBe(false);
    expect(secretMatches(generateSecret().secret, salt, hash, 'pepper-one-pepper-one')).toBe(false);
    expect(hash.toString('hex')).not.toContain(Buffer.from(secret).toString('hex'));
  });

  it('compare admin tokens of any length', () => {
    expect(tokensEqual('abc', 'abc')).toBe(true);
    expect(tokensEqual('abc', 'abcd')).toBe(false);
    expect(tokensEqual('', 'abc')).toBe(false);
  });
});

describe('credentialFrom with HTTP Basic (the Langfuse SDKs)', () => {
  const basic = (user: string, password: string) => `Basic ${Buffer.from(`${user}:${password}`).toString('base64')}`;

  it('takes the password as the secret, whatever the user name', () => {
    expect(credentialFrom(basic('pk-lf-1234', 'sf_abc_def'), undefined)).toBe('sf_abc_def');
    expect(credentialFrom(basic('', 'sf_abc:def'), undefined)).toBe('sf_abc:def');
  });

  it('finds no secret in a Basic header without a password', () => {
    expect(credentialFrom(basic('pk-lf-1234', ''), undefined)).toBeUndefined();
    expect(credentialFrom(`Basic ${Buffer.from('no-colon').toString('base64')}`, undefined)).toBeUndefined();
  });
});
