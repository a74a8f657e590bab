import { ipIsPrivate, parseIp } from './ip-address';

/** An IPv4 range's first, second, last-but-one and last addresses, and the addresses just before and after it. */
function edges(first: string, prefix: number): { inside: string[]; outside: string[] } {
  const base = first.split('.').reduce((value, octet) => value * 256 + Number(octet), 0);
  const size = 2 ** (32 - prefix);
  const dotted = (value: number) => [24, 16, 8, 0].map((shift) => Math.floor(value / 2 ** shift) % 256).join('.');
  return {
    inside: [base, base + 1, base + size - 2, base + size - 1].map(dotted),
    outside: [base - 1, base + size].filter((value) => value >= 0 && value < 2 ** 32).map(dotted),
  };
}

describe('ipIsPrivate', () => {
  it.each([
    ['0.0.0.0', 8],
    ['10.0.0.0', 8],
    ['100.64.0.0', 10],
    ['127.0.0.0', 8],
    ['169.254.0.0', 16],
    ['172.16.0.0', 12],
    ['192.168.0.0', 16],
    ['198.18.0.0', 15],
  ])('covers exactly %s/%d', (first, prefix) => {
    const { inside, outside } = edges(first, prefix);
    for (const address of inside) expect([address, ipIsPrivate(address)]).toEqual([address, true]);
    // The addresses just outside each of these ranges are public unicast.
    for (const address of outside) expect([address, ipIsPrivate(address)]).toEqual([address, false]);
  });

  it.each([
    '224.0.0.1',
    '239.255.255.255',
    '240.0.0.0',
    '255.255.255.255',
    '192.0.0.8',
    '192.0.2.1',
    '198.51.100.1',
    '203.0.113.9',
    '192.88.99.1',
  ])('refuses multicast, reserved and documentation address %s', (address) => {
    expect(ipIsPrivate(address)).toBe(true);
  });

  it.each(['8.8.8.8', '1.1.1.1', '93.184.216.34', '223.255.255.255', '172.217.16.142'])('accepts the public address %s', (address) => {
    expect(ipIsPrivate(address)).toBe(false);
  });

  it.each([
    '::1',
    '::',
    '0:0:0:0:0:0:0:1',
    '[::1]',
    '::ffff:127.0.0.1',
    '::ffff:7f00:1',
    '::ffff:192.168.0.1',
    '::127.0.0.1',
    'fc00::',
    'fdff:ffff:ffff:ffff:ffff:ffff:ffff:ffff',
    'fe80::1',
    'fe80::1%eth0',
    'febf:ffff::1',
    'fec0::1',
    'ff02::1',
    '100::1',
    '64:ff9b::10.0.0.1',
    '64:ff9b:1::1',
    '2001:db8::1',
    '2001:0:4136:e378:8000:63bf:3fff:fdd2',
    '2001:2::1',
    '3fff::1',
    '2002:c0a8:101::1',
  ])('refuses the IPv6 address %s', (address) => {
    expect(ipIsPrivate(address)).toBe(true);
  });

  it.each([
    '2606:4700:4700::1111',
    '2001:4860:4860::8888',
    '::ffff:8.8.8.8',
    '64:ff9b::8.8.8.8',
    '2002:808:808::1',
    '[2a00:1450:4001:80b::200e]',
  ])('accepts the public IPv6 address %s', (address) => {
    expect(ipIsPrivate(address)).toBe(false);
  });

  it('reads other IPv4 spellings as the URL parser does', () => {
    expect(parseIp('2130706433')).toEqual({ version: 4, address: 0x7f000001 });
    expect(parseIp('0x7f.1')).toEqual({ version: 4, address: 0x7f000001 });
    expect(parseIp('0177.0.0.01')).toEqual({ version: 4, address: 0x7f000001 });
    expect(ipIsPrivate('0x0a.0.0.1')).toBe(true);
  });

  it('fails closed on anything that is not an IP address', () => {
    for (const text of [
      '',
      'example.com',
      'cafe',
      'localhost',
      '1.2.3.4.5',
      '256.0.0.1',
      'evil.example@127.0.0.1',
      '::1::2',
      '1:2:3:4:5:6:7:8:9',
    ]) {
      expect([text, ipIsPrivate(text)]).toEqual([text, true]);
    }
    expect(parseIp('cafe')).toBeUndefined();
    expect(parseIp('example.com')).toBeUndefined();
  });
});
