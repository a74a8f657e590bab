import { IP_ADDRESS_DETECTOR } from './ip-address.detector';

const MARKER = '[REDACTED:IP_ADDRESS]';

function redact(text: string): { text: string; count: number } {
  const tally = { redactions: 0 };
  return { text: IP_ADDRESS_DETECTOR.redact(text, tally), count: tally.redactions };
}

describe('IP_ADDRESS detector', () => {
  it.each([
    ['192.168.1.20', 'client ', ' connected'],
    ['10.0.0.1', '', ':8080'],
    ['8.8.8.8', 'ip=', '.'],
    ['0.0.0.0', 'bind ', ''],
    ['255.255.255.255', '(', ')'],
    ['2001:db8:85a3::8a2e:370:7334', 'from ', ' via'],
    ['2001:0db8:0000:0000:0000:ff00:0042:8329', '', ''],
    ['fe80::1', 'link-local ', '%eth0'],
    ['::1', 'localhost is ', '.'],
    ['2001:db8::1', '[', ']:443'],
    ['::ffff:192.0.2.128', 'mapped ', ''],
    ['1::1.2.3.4', '', ' ok'],
    ['fe80::', 'prefix ', ' only'],
    ['fe80::1', 'at ', ': it failed'],
  ])('replaces %s', (address, before, after) => {
    expect(redact(`${before}${address}${after}`)).toEqual({ text: `${before}${MARKER}${after}`, count: 1 });
  });

  it('counts each address', () => {
    expect(redact('10.0.0.1 -> 10.0.0.2 -> ::1')).toEqual({ text: `${MARKER} -> ${MARKER} -> ${MARKER}`, count: 3 });
  });

  it.each([
    ['a five-part version', 'release 1.2.3.4.5'],
    ['a version glued to a letter', 'v1.2.3.4'],
    ['an octet over 255', '256.1.1.1'],
    ['leading zeros (a date)', '01.02.03.04'],
    ['a user agent', 'Chrome/120.0.6099.109'],
    ['a clock time', '10:30:00'],
    ['an ISO timestamp', '2024-05-01T10:30:00.123Z'],
    ['C++ scope', 'std::vector<int>'],
    ['Rust paths', 'crate::module::Type'],
    ['a MAC address', '00:1a:2b:3c:4d:5e'],
    ['a bare ::', 'a :: b'],
    ['JSON', '{"role":"user","content":"hi"}'],
    ['a UUID', '123e4567-e89b-12d3-a456-426614174000'],
    ['nine IPv6 groups', '1:2:3:4:5:6:7:8:9'],
    ['two gaps', '1::2::3'],
  ])('leaves %s alone', (_, text) => {
    expect(redact(text)).toEqual({ text, count: 0 });
  });

  it('redacts a four-part version, which cannot be told from an address (documented)', () => {
    expect(redact('version 1.2.3.4').text).toBe(`version ${MARKER}`);
  });

  it('stays linear on long hex and colon runs', () => {
    const text = `${'a:'.repeat(200_000)} ${'1.'.repeat(200_000)}`;
    const started = performance.now();
    redact(text);
    expect(performance.now() - started).toBeLessThan(2000);
  });
});
