/**
 * A caller as the auth layer hands it to the pipeline, for unit tests that drive the lifecycle,
 * its plugins or the hub without a token: `alice`, reading, for an hour.
 */
import { SCOPES, type Principal } from '../../src/auth/principal.js';

/** `alice` with `scopes` (read alone by default). */
export function testPrincipal(scopes: readonly string[] = [SCOPES.read]): Principal {
  return { subject: 'alice', clientId: null, scopes: new Set(scopes), expiresAt: Date.now() + 3_600_000, issuer: 'https://issuer.example' };
}
