/**
 * Rate limits at the HTTP edge: a spent budget is answered with 429 and `Retry-After` (seconds),
 * as a GraphQL error (`extensions.code: RATE_LIMITED`) on /graphql and a problem document elsewhere.
 */
import type { NextFunction, Request, RequestHandler, Response } from 'express';
import { isIPv4, isIPv6 } from 'node:net';
import { principalKey } from '../auth/principal.js';
import { ServiceError } from '../base/errors.js';
import { NO_RATE_LIMITS, retryAfterSeconds, type RateLimitBucket, type RateLimits } from '../rate-limits/rate-limits.js';
import { principalOf } from './authenticate.js';
import { sendRefusal } from './send-refusal.js';

/** Who a request is counted for. */
export type RateLimitKey = (req: Request, res: Response) => string;

/** The authenticated principal (after `authenticate`): its issuer and subject. */
export const byPrincipal: RateLimitKey = (_req, res) => principalKey(principalOf(res));

/**
 * The client's address as Express sees it under `TRUST_PROXY`: behind a trusted proxy, the client
 * the proxy forwarded for; from any other peer, the peer itself, whatever X-Forwarded-For it sends.
 */
export const byClientIp: RateLimitKey = (req) => clientAddressKey(req.ip ?? req.socket.remoteAddress ?? '');

/**
 * The budget key of a client address. IPv4 is keyed per address, and IPv4-mapped IPv6
 * (`::ffff:a.b.c.d`, how a dual-stack listener reports IPv4 peers) as that IPv4 address. IPv6 is
 * keyed per /64 prefix: one host is routinely given a whole /64 and can use any of its 2^64
 * addresses, so per-address keys would let one client rotate through fresh budgets without end.
 */
export function clientAddressKey(address: string): string {
  if (isIPv4(address)) return address;
  const unzoned = address.replace(/%.*$/, '');
  if (!isIPv6(unzoned)) return address === '' ? 'unknown' : address;
  const groups = ipv6Groups(unzoned);
  const [g6 = 0, g7 = 0] = groups.slice(6);
  if (groups.slice(0, 5).every((g) => g === 0) && groups[5] === 0xffff) return [g6 >> 8, g6 & 0xff, g7 >> 8, g7 & 0xff].join('.');
  return `${groups
    .slice(0, 4)
    .map((g) => g.toString(16))
    .join(':')}::/64`;
}

/** The eight 16-bit groups of a valid IPv6 address. */
function ipv6Groups(address: string): number[] {
  // A trailing dotted IPv4 part (::ffff:192.0.2.1, 64:ff9b::192.0.2.1) stands for the last two groups.
  const dotted = /(\d+)\.(\d+)\.(\d+)\.(\d+)$/.exec(address);
  const hex =
    dotted === null
      ? address
      : `${address.slice(0, dotted.index)}${((Number(dotted[1]) << 8) | Number(dotted[2])).toString(16)}:${((Number(dotted[3]) << 8) | Number(dotted[4])).toString(16)}`;
  const [head = '', tail] = hex.split('::');
  const headGroups = head === '' ? [] : head.split(':');
  const tailGroups = tail === undefined || tail === '' ? [] : tail.split(':');
  const zeros = tail === undefined ? [] : Array.from({ length: 8 - headGroups.length - tailGroups.length }, () => '0');
  return [...headGroups, ...zeros, ...tailGroups].map((group) => parseInt(group, 16));
}

/** Middleware that takes one unit of `bucket` per request, or answers 429. */
export function rateLimit(limits: RateLimits, bucket: RateLimitBucket, keyOf: RateLimitKey): RequestHandler {
  // Limits turned off cost nothing per request: no key, no promise, no extra tick before `next`.
  if (limits === NO_RATE_LIMITS) return (_req, _res, next) => next();
  return async (req: Request, res: Response, next: NextFunction) => {
    let decision;
    try {
      decision = await limits.consume(bucket, keyOf(req, res));
    } catch (error) {
      next(error);
      return;
    }
    if (decision.allowed) {
      next();
      return;
    }
    const seconds = retryAfterSeconds(decision);
    const message = `Too many requests: try again in ${seconds} s.`;
    res.setHeader('Retry-After', String(seconds));
    sendRefusal(req, res, new ServiceError('RATE_LIMITED', message, { details: { retryAfterSeconds: seconds } }));
  };
}
