/** What a service process is built from (the options of `startService`, service.ts). */
import type { Auth } from '../auth/auth.js';
import type { Logger } from '../base/logger.js';
import type { Config } from '../config/config.js';
import type { OperationPlugin } from '../graphql/pipeline/operation-plugin.js';
import type { BrokerHandlers, BrokerSide } from '../ingest/broker-side.js';
import type { StopPhases } from '../process/stop-phases.js';
import type { ResultLog } from '../log/result-log.js';
import type { RateLimits } from '../rate-limits/rate-limits.js';

/** Everything a service process is built from; clients are injected, never created here. */
export interface ServiceOptions {
  readonly config: Config;
  readonly logger: Logger;
  readonly log: ResultLog;
  /** Builds the broker side around the handlers of what it consumes (results; start requests in the replicated mode). */
  readonly createBrokerSide: (handlers: BrokerHandlers) => BrokerSide;
  /** Token verification (and the embedded issuer, if any); required unless the role is `consumer`. */
  readonly auth?: Auth;
  /** Request budgets (see src/rate-limits/rate-limits.ts); none when absent. */
  readonly rateLimits?: RateLimits;
  /** Rules of the operation lifecycle run after the service's own (src/graphql/pipeline/plugins/index.ts), on every transport. */
  readonly plugins?: readonly OperationPlugin[];
  /** How many tests the state holds in this process, for metrics (memory modes only). */
  readonly storedTests?: () => number;
  /**
   * Where the parts this process stops are registered; the caller may have registered its own
   * (e.g. connections). A fresh one by default. `Service.stop()` stops it.
   */
  readonly stopPhases?: StopPhases;
}
