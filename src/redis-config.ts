/**
 * The Redis part of the configuration: where the shared state lives and how to reach it. Managed
 * Redis services want TLS and a password: `REDIS_URL` takes `rediss://` (TLS) and the credentials
 * in the URL (`rediss://:password@host:6380` or `rediss://user:password@host:6380/0`), and
 * `REDIS_TLS_CA_FILE` names the CA to trust when the service's certificate is not signed by a
 * public one. Errors name the variable and never repeat the password.
 */
import { readFileSync } from 'node:fs';
import { X509Certificate } from 'node:crypto';
import { ConfigError } from './errors.js';

/** How to reach Redis. */
export interface RedisConnectionConfig {
  /** `redis://` or `rediss://` (TLS), with the credentials if any. */
  readonly redisUrl: string;
  /** PEM certificates to trust for `rediss://` instead of the public CAs; null to use those. */
  readonly redisTlsCa: string | null;
}

type Env = Readonly<Record<string, string | undefined>>;

const DEFAULT_URL = 'redis://127.0.0.1:6379';

/** The URL with its password replaced, for messages. */
export function redactRedisUrl(url: string): string {
  return url.replace(/^(rediss?:\/\/[^:@/]*:)[^@/]*@/i, '$1***@');
}

/** Reads REDIS_URL and REDIS_TLS_CA_FILE from `env`. */
export function readRedisConfig(env: Env): RedisConnectionConfig {
  const redisUrl = env.REDIS_URL?.trim() || DEFAULT_URL;
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
  const caFile = env.REDIS_TLS_CA_FILE?.trim() || null;
  if (caFile === null) return { redisUrl, redisTlsCa: null };
  if (parsed.protocol !== 'rediss:') throw new ConfigError('REDIS_TLS_CA_FILE', 'is set, but REDIS_URL is not a rediss:// (TLS) URL');
  let text: string;
  try {
    text = readFileSync(caFile, 'utf8');
  } catch (error) {
    throw new ConfigError('REDIS_TLS_CA_FILE', `cannot read "${caFile}" (${(error as NodeJS.ErrnoException).code ?? 'unknown error'})`);
  }
  try {
    if (!text.includes('-----BEGIN CERTIFICATE-----')) throw new Error('no PEM certificate');
    void new X509Certificate(text);
  } catch {
    throw new ConfigError('REDIS_TLS_CA_FILE', `"${caFile}" holds no PEM certificate (-----BEGIN CERTIFICATE-----)`);
  }
  return { redisUrl, redisTlsCa: text };
}
