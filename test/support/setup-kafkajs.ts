/**
 * Run before every test file (vitest.config.ts `setupFiles`): the tests' own kafkajs clients
 * (producers of results, readers of requests, admin clients) get the request-queue timer clamp the
 * service applies (src/ingest/kafkajs-queue-timer.ts), so no test process prints kafkajs's
 * `TimeoutNegativeWarning` on Node 24 and later.
 */
import '../../src/ingest/kafkajs-queue-timer.js';
