/**
 * What the consumer does with each chunk of decoded messages: append them to the result log in one
 * call (one pass for the memory log, one script call per test, sent together, for Redis). The log
 * delivers what it took as new to followers itself, so a redelivered record is neither stored nor
 * announced twice, and nothing stored can go unannounced.
 */
import type { AppendResult } from '../domain/types.js';
import type { ResultEventHandler } from '../ingest/consumer.js';
import type { ResultStore } from '../log/result-log.js';

/** Creates the consumer's `onEvents` handler. */
export function createResultRecorder(options: { log: ResultStore }): ResultEventHandler {
  const { log } = options;
  return async (messages) => {
    if (messages.length === 0) return [];
    // If the log fails, the chunk fails with its error: the consumer hands it over again, and
    // appends are idempotent.
    const results = await log.append(messages);
    const outcomes = new Array<AppendResult['outcome']>(results.length);
    for (let i = 0; i < results.length; i++) outcomes[i] = (results[i] as AppendResult).outcome;
    return outcomes;
  };
}
