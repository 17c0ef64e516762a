/** Builds the token verifier (and, in embedded mode, the issuer) from the configuration. */
import type { AuthConfig } from '../config/config.js';
import { createAccessTokenVerifier } from './access-token-verifier.js';
import type { Auth } from './auth.js';
import type { KeySource } from './key-source.js';

/** Creates the verifier for an external issuer (JWKS or discovery) or a shared HS256 secret. */
export function createExternalAuth(config: AuthConfig): Auth {
  let keys: KeySource;
  if (config.mode === 'hs256') keys = { kind: 'secret', secret: config.hs256Secret as Uint8Array };
  else if (config.jwksUri !== null) keys = { kind: 'jwks', uri: config.jwksUri };
  else keys = { kind: 'discovery', issuer: config.issuer };
  return {
    verifyAccessToken: createAccessTokenVerifier({
      keys,
      algorithms: config.algorithms,
      issuers: [config.issuer],
      audience: config.audience,
      clockToleranceSeconds: config.clockToleranceSeconds,
      cacheSeconds: config.verifiedTokenCacheSeconds,
      tokenType: config.tokenType,
    }),
    dispose: async () => {},
  };
}
