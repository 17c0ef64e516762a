/**
 * The Redis part of the configuration: where the shared state lives and how to reach it. Managed
 * Redis services want TLS and a password: `REDIS_URL` takes `rediss://` (TLS) and the credentials
 * in the URL (`rediss://:password@host:6380` or `rediss://user:password@host:6380/0`), and
 * `REDIS_TLS_CA_FILE` names the CA to trust when the service's certificate is not signed by a
 * public one. Errors name the variable and never repeat the password.
 */
import { ConfigError } from '../errors.js';
import type { Reader } from './reader.js';

/** How to reach Redis. */
export interface RedisConnectionConfig {
  /** `redis://` or `rediss://` (TLS), with the credentials if any. */
  readonly redisUrl: string;
  /** PEM certificates to trust for `rediss://` instead of the public CAs; null to use those. */
  readonly redisTlsCa: string | null;
}

const DEFAULT_URL = 'redis://127.0.0.1:6379';

/** The URL with its password replaced, for messages. */
export function redactRedisUrl(url: string): string {
  return url.replace(/^(rediss?:\/\/[^:@/]*:)[^@/]*@/i, '$1***@');
}

/** Reads REDIS_URL and REDIS_TLS_CA_FILE. */
export function readRedisConfig(read: Reader): RedisConnectionConfig {
  const redisUrl = read.optional('REDIS_URL') ?? DEFAULT_URL;
  let parsed: URL;
  try {
    parsed = new URL(redisUrl);
  } catch {
    throw new ConfigError('REDIS_URL', `expected a redis:// or rediss:// URL, got "${redactRedisUrl(redisUrl)}"`);
  }
  if (parsed.protocol !== 'redis:' && parsed.protocol !== 'rediss:') {
    throw new ConfigError('REDIS_URL', `expected a redis:// or rediss:// URL (rediss:// for TLS), got the scheme "${parsed.protocol}"`);
  }
  if (parsed.hostname === '') throw new ConfigError('REDIS_URL', 'names no host');
  if (read.optional('REDIS_TLS_CA_FILE') === undefined) return { redisUrl, redisTlsCa: null };
  if (parsed.protocol !== 'rediss:') throw new ConfigError('REDIS_TLS_CA_FILE', 'is set, but REDIS_URL is not a rediss:// (TLS) URL');
  return { redisUrl, redisTlsCa: read.certificates('REDIS_TLS_CA_FILE') };
}
