/**
 * kafkajs's own modules, for the workarounds that replace a method of them (kafkajs-queue-timer.ts,
 * kafkajs-stopped-fetch.ts). kafkajs is unmaintained upstream, so its release is pinned and each
 * workaround applies to that release only: on another one it changes nothing, and its test fails
 * so that the upgrade looks at it again.
 */
import { createRequire } from 'node:module';

/** The kafkajs release the workarounds were written against. */
export const PATCHED_KAFKAJS = '2.2.4';

const require = createRequire(import.meta.url);

/** Whether the installed kafkajs is {@link PATCHED_KAFKAJS}. */
export const kafkajsIsPatchedRelease = (require('kafkajs/package.json') as { version: string }).version === PATCHED_KAFKAJS;

/** Loads a module of kafkajs's source (`kafkajs/src/consumer/runner.js`). */
export function requireKafkajsModule<T>(specifier: `kafkajs/src/${string}`): T {
  return require(specifier) as T;
}
