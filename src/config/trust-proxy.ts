/**
 * `TRUST_PROXY`: which peers may tell the service who the client is (`X-Forwarded-For`) and how it
 * was reached (`X-Forwarded-Proto`, `X-Forwarded-Host`). Read here, checked with Express's own
 * parser (the one `trust proxy` uses), so what starts is exactly what Express will match.
 */
import express from 'express';
import { ConfigError } from '../base/errors.js';
import type { Reader } from './reader.js';

/**
 * `false`: no peer is trusted; the TCP peer is the client. A number: that many proxies in front,
 * whatever their addresses. A list: the proxies' addresses and CIDRs (or `loopback`, `linklocal`,
 * `uniquelocal`); a peer outside it is the client, whatever it forwards.
 */
export type TrustProxy = false | number | readonly string[];

/** Reads `TRUST_PROXY`. */
export function readTrustProxy(read: Reader): TrustProxy {
  const value = read.optional('TRUST_PROXY');
  if (value === undefined || /^(false|off|no|0)$/i.test(value)) return false;
  if (/^(true|on|yes)$/i.test(value)) {
    // Express would take X-Forwarded-For's leftmost entry, which the client itself writes.
    throw new ConfigError(
      'TRUST_PROXY',
      'trusting every peer lets any client choose its own address; give the number of proxies in front (e.g. 1) or their addresses',
    );
  }
  if (/^\d+$/.test(value)) {
    const hops = Number(value);
    if (hops > 10) throw new ConfigError('TRUST_PROXY', `expected a hop count from 0 to 10, got ${hops}`);
    return hops;
  }
  const entries = value
    .split(',')
    .map((entry) => entry.trim())
    .filter((entry) => entry !== '');
  if (entries.length === 0) throw new ConfigError('TRUST_PROXY', 'must list at least one address or CIDR');
  for (const entry of entries) {
    try {
      express().set('trust proxy', [entry]);
    } catch {
      throw new ConfigError('TRUST_PROXY', `"${entry}" is not an address, a CIDR (10.0.0.0/8, fd00::/8), loopback, linklocal or uniquelocal`);
    }
  }
  return entries;
}
