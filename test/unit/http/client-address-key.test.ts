import { describe, expect, it } from 'vitest';
import { clientAddressKey } from '../../../src/http/rate-limit.js';

describe('clientAddressKey', () => {
  it("keys IPv4 per address, and IPv4-mapped IPv6 (a dual-stack listener's IPv4 peers) as that address", () => {
    expect(clientAddressKey('203.0.113.7')).toBe('203.0.113.7');
    expect(clientAddressKey('::ffff:203.0.113.7')).toBe('203.0.113.7');
    expect(clientAddressKey('::FFFF:cb00:7107')).toBe('203.0.113.7');
    expect(clientAddressKey('0:0:0:0:0:ffff:203.0.113.8')).toBe('203.0.113.8');
  });

  it('keys IPv6 per /64, whatever the spelling, so one host cannot rotate through its prefix', () => {
    const key = '2001:db8:1:2::/64';
    for (const address of [
      '2001:db8:1:2::1',
      '2001:db8:1:2:ffff:ffff:ffff:ffff',
      '2001:0DB8:0001:0002:0000:0000:0000:0042',
      '2001:db8:1:2::1%eth0',
      '2001:db8:1:2::192.0.2.1',
    ]) {
      expect(clientAddressKey(address), address).toBe(key);
    }
    expect(clientAddressKey('2001:db8:1:3::1')).toBe('2001:db8:1:3::/64');
    expect(clientAddressKey('::1')).toBe('0:0:0:0::/64');
    expect(clientAddressKey('fe80::1')).toBe('fe80:0:0:0::/64');
  });

  it('keeps anything else as it is, and an empty address as unknown', () => {
    expect(clientAddressKey('')).toBe('unknown');
    expect(clientAddressKey('not-an-address')).toBe('not-an-address');
  });
});
