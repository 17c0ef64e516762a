import { describe, expect, it } from 'vitest';
import { loadConfig } from '../../../src/config/config.js';
import { configError } from '../../support/config-error.js';

describe('TRUST_PROXY', () => {
  it('trusts no peer by default, nor with false or 0', () => {
    expect(loadConfig({}).trustProxy).toBe(false);
    expect(loadConfig({ TRUST_PROXY: 'false' }).trustProxy).toBe(false);
    expect(loadConfig({ TRUST_PROXY: '0' }).trustProxy).toBe(false);
  });

  it('reads a hop count, or a list of addresses, CIDRs and range names as Express parses them', () => {
    expect(loadConfig({ TRUST_PROXY: '2' }).trustProxy).toBe(2);
    expect(loadConfig({ TRUST_PROXY: ' 10.0.0.0/8, fd00::/8 ,192.168.1.7, loopback' }).trustProxy).toEqual([
      '10.0.0.0/8',
      'fd00::/8',
      '192.168.1.7',
      'loopback',
    ]);
    // proxy-addr's netmask form is Express's too.
    expect(loadConfig({ TRUST_PROXY: '172.16.0.0/255.240.0.0' }).trustProxy).toEqual(['172.16.0.0/255.240.0.0']);
  });

  it('refuses true (a client would choose its own address), a bad entry by name, and an absurd hop count', () => {
    expect(configError({ TRUST_PROXY: 'true' }).message).toMatch(/^TRUST_PROXY: trusting every peer lets any client choose its own address/);
    expect(configError({ TRUST_PROXY: '10.0.0.0/8, proxy.internal' }).message).toMatch(/^TRUST_PROXY: "proxy.internal" is not an address, a CIDR/);
    expect(configError({ TRUST_PROXY: '10.0.0.0/33' }).message).toMatch(/^TRUST_PROXY: "10.0.0.0\/33"/);
    expect(configError({ TRUST_PROXY: '11' }).message).toMatch(/^TRUST_PROXY: expected a hop count from 0 to 10/);
    expect(configError({ TRUST_PROXY: ',' }).message).toMatch(/^TRUST_PROXY: must list at least one/);
  });
});
