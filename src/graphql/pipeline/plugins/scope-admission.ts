/**
 * Who may run what, decided once per operation where the lifecycle admits it: an operation must
 * be named when the document holds several, subscriptions are served only by the streaming
 * transports, and the caller's token must carry the operation type's scope (`tests:read` for
 * queries and subscriptions, `tests:write` for mutations; see src/auth/access.ts). The resolvers
 * then only decide which tests the caller may see (ownership), which depends on the data.
 */
import type { AccessPolicy } from '../../../auth/access.js';
import { InsufficientScopeError, bearerChallenge } from '../../../auth/auth-error.js';
import { ServiceError } from '../../../base/errors.js';
import type { OperationPlugin } from '../operation-plugin.js';
import { refusalError } from '../refusal-error.js';

/** The scope rules of `access` as a plugin. */
export function scopeAdmissionPlugin(access: AccessPolicy): OperationPlugin {
  return {
    name: 'scope-admission',
    onAdmit({ operation, transport, principal }) {
      if (operation == null) {
        return new ServiceError(
          'OPERATION_RESOLUTION_FAILURE',
          'Unable to identify the operation to run: name one of the document\'s operations in "operationName".',
        );
      }
      if (operation.operation === 'subscription' && transport === 'http') {
        return new ServiceError(
          'BAD_USER_INPUT',
          'Subscriptions are served over WebSocket (the graphql-ws protocol) or SSE (Accept: text/event-stream) on this same path.',
        );
      }
      try {
        access.requireScope(principal, access.scopeFor(operation.operation));
      } catch (error) {
        if (!(error instanceof InsufficientScopeError)) throw error;
        return refusalError(error, { headers: new Map([['www-authenticate', bearerChallenge(error) as string]]) });
      }
      return undefined;
    },
  };
}
