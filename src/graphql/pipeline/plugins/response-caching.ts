/**
 * The response cache as a plugin of the lifecycle (the cache itself: `../response-cache.ts`): at
 * the `arrive` step of an HTTP request it answers with the body it kept for the same request and
 * visibility; after the execute step of a query it may keep, it keeps the result with the tests the
 * operation read. Streamed operations never arrive there, so nothing of theirs is kept.
 */
import type { OperationPlugin } from '../operation-plugin.js';
import type { ResponseCache } from '../response-cache.js';

/** The response-caching plugin over `cache` (created by the service, started and stopped with the lifecycle's plugins). */
export function responseCachingPlugin(cache: ResponseCache): OperationPlugin {
  return {
    name: 'response-caching',
    // Its change feed subscription: until it holds, nothing is served or kept.
    onServiceStart: () => cache.start(),
    onServiceStop: () => cache.dispose(),
    arrive: (operation) => cache.arrive(operation),
    onExecute: (operation) => cache.onExecute(operation),
  };
}
