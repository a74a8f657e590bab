import { describeFetchFailure } from './webhook.delivery';

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
