/** The refusal of a configuration, for tests of what loadConfig accepts. */
import { loadConfig } from '../../src/config/config.js';
import { ConfigError } from '../../src/base/errors.js';

/** The ConfigError `env` makes loadConfig throw; fails when it throws none or another error. */
export function configError(env: Record<string, string>): ConfigError {
  try {
    loadConfig(env);
  } catch (error) {
    if (error instanceof ConfigError) return error;
    throw error;
  }
  throw new Error(`no ConfigError for ${JSON.stringify(env)}`);
}
