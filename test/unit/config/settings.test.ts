/**
 * The settings' declarations (src/config/settings.ts) against what the code reads: every setting
 * the configuration reads is declared (the reader accepts no other name, checked by the type
 * checker), every declared one is read under some configuration, and the reference page is
 * generated from them.
 */
import { describe, expect, it } from 'vitest';
import { loadConfig } from '../../../src/config/config.js';
import type { Env } from '../../../src/config/reader.js';
import { SETTINGS } from '../../../src/config/settings.js';
import { renderConfigurationReference } from '../../../scripts/config-reference.js';
import { HS256_ENV } from '../../support/tokens.js';

/** The names `loadConfig` looks up in `env`. */
function namesRead(env: Env): Set<string> {
  const seen = new Set<string>();
  loadConfig(new Proxy(env, { get: (target, name) => (typeof name === 'string' && seen.add(name), target[name as string]) }));
  return seen;
}

/** Configurations that between them take every path through the sections. */
const PROFILES: Env[] = [
  {},
  { ...HS256_ENV, AUTH_ALGORITHMS: 'HS256', STATE_STORE: 'redis', SERVICE_ROLE: 'api', KAFKA_SSL: 'true' },
  {
    AUTH_ISSUER: 'https://issuer.example',
    AUTH_JWKS_URI: 'https://issuer.example/jwks',
    STATE_STORE: 'replicated',
    INSTANCE_ID: 'a',
    KAFKA_SASL_MECHANISM: 'plain',
    KAFKA_SASL_USERNAME: 'u',
    KAFKA_SASL_PASSWORD: 'p',
  },
  { NODE_ENV: 'production', OIDC_SIGNING_KEY: '{"kty":"EC"}', OIDC_COOKIE_KEYS: 'x'.repeat(32) },
];

describe("the settings' declarations", () => {
  it('declare nothing the configuration does not read', () => {
    const read = new Set(PROFILES.flatMap((env) => [...namesRead(env)]));
    const unread = Object.keys(SETTINGS).filter((name) => !read.has(name));
    expect(unread).toEqual([]);
  });

  it('are what the reference page shows, one row each', () => {
    const page = renderConfigurationReference();
    for (const [name, setting] of Object.entries(SETTINGS)) {
      const row = page.split('\n').find((line) => line.startsWith(`| \`${name}\` |`));
      expect(row, name).toBeDefined();
      expect(row).toContain(setting.description);
    }
  });
});
