/**
 * The error edge as a plugin (the classification and masking are `../format-error.ts`'s): errors
 * raised on purpose keep their message and code, anything else is logged once and masked.
 */
import type { Logger } from '../../../base/logger.js';
import { createErrorFormatter } from '../format-error.js';
import type { OperationPlugin } from '../operation-plugin.js';

/** Masks unexpected errors unless `debug` (GRAPHQL_DEBUG_ERRORS); `logger` gets each one once. */
export function errorMaskingPlugin(options: { readonly debug: boolean; readonly logger: Logger }): OperationPlugin {
  return { name: 'error-masking', formatError: createErrorFormatter(options) };
}
