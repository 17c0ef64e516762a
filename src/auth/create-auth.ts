/** Chooses the auth side of a process from its configuration. */
import type { Config } from '../config/config.js';
import type { Logger } from '../base/logger.js';
import type { Auth } from './auth.js';
import { createExternalAuth } from './external-auth.js';
import type { EmbeddedAuthOptions } from './embedded-issuer.js';

/** Creates the auth side the configuration asks for; `embedded` options apply to the embedded issuer only. */
export async function createAuth(config: Config, logger: Logger, embedded: EmbeddedAuthOptions = {}): Promise<Auth> {
  if (config.auth.mode !== 'embedded') return createExternalAuth(config.auth);
  // Loaded only when used: deployments with an external issuer never load oidc-provider.
  const { createEmbeddedAuth } = await import('./embedded-issuer.js');
  return createEmbeddedAuth(config, logger, embedded);
}
