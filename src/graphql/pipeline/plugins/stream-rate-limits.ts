/**
 * The streaming transports' operation budget: one unit of the principal's `subscribe` budget per
 * operation over WebSocket or SSE (one bucket for both), taken before the document is read. HTTP
 * operations are counted by the HTTP edge's `api` budget with every other HTTP request.
 */
import { principalKey } from '../../../auth/principal.js';
import { ServiceError } from '../../../base/errors.js';
import { retryAfterSeconds, type RateLimits } from '../../../rate-limits/rate-limits.js';
import type { OperationPlugin } from '../operation-plugin.js';

/** The `subscribe` budget of `rateLimits` as a plugin; over budget, RATE_LIMITED with the seconds to wait. */
export function streamRateLimitsPlugin(rateLimits: RateLimits): OperationPlugin {
  return {
    name: 'stream-rate-limits',
    async onStart({ principal, transport }) {
      if (transport === 'http') return undefined;
      const budget = await rateLimits.consume('subscribe', principalKey(principal));
      if (budget.allowed) return undefined;
      const seconds = retryAfterSeconds(budget);
      return new ServiceError('RATE_LIMITED', `Too many operations: try again in ${seconds} s.`, { details: { retryAfterSeconds: seconds } });
    },
  };
}
