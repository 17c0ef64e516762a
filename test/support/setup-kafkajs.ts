/**
 * Run before every test file (vitest.config.ts `setupFiles`): the tests' own kafkajs clients
 * (producers of results, readers of requests, admin clients) get the workarounds the service
 * applies to kafkajs 2.2.4: the request-queue timer clamp (src/ingest/kafkajs-queue-timer.ts), so no
 * test process prints kafkajs's `TimeoutNegativeWarning` on Node 24 and later, and no check of an
 * empty request queue every millisecond (src/ingest/kafkajs-idle-queue.ts), and the stopped
 * consumer's fetch (src/ingest/kafkajs-stopped-fetch.ts), so none wedges when stopped as a broker
 * comes or goes, and a connection whose request timed out given up (src/ingest/kafkajs-timed-out-connection.ts);
 * the record decode that refuses a record over its bounds before its headers
 * are decoded (src/ingest/kafkajs-record-bounds.ts); and the record decoder that computes offsets
 * and timestamps in numbers (src/ingest/kafkajs-record-decoder.ts), installed before any test's
 * first fetch loads kafkajs's record batch decoder.
 */
import '../../src/ingest/kafkajs-queue-timer.js';
import '../../src/ingest/kafkajs-idle-queue.js';
import '../../src/ingest/kafkajs-stopped-fetch.js';
import '../../src/ingest/kafkajs-timed-out-connection.js';
import '../../src/ingest/kafkajs-record-bounds.js';
import '../../src/ingest/kafkajs-record-decoder.js';
