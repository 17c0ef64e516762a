/**
 * Stored messages a read had to skip because their stored text holds no message this version can
 * serve (message-format.ts says why). Skipping keeps the rest of the test readable; counting (a
 * metric) and a log line at most every few seconds tell operators that something wrote to the
 * shared store what it should not have, without one line per read of the same damaged test.
 */
import type { Logger } from '../base/logger.js';

/** How often the skipped messages are logged, at most. */
const LOG_EVERY_MS = 10_000;

/** The count of skipped stored messages. */
export interface UnreadableMessages {
  /** Counts one skipped message of `correlationId` at `position` (its arrival index). */
  report(correlationId: string, position: number, reason: string): void;
  /** Skipped messages since the process started. */
  count(): number;
}

/** Creates the count; its log lines go to `logger`. */
export function createUnreadableMessages(logger: Logger): UnreadableMessages {
  let count = 0;
  let logged = 0;
  let lastLog = -Infinity;
  return {
    report(correlationId, position, reason) {
      count += 1;
      const now = Date.now();
      if (now - lastLog < LOG_EVERY_MS) return;
      logger.warn(
        { correlationId: correlationId.slice(0, 256), position, reason, skippedSinceLastLine: count - logged },
        'skipped a stored message that cannot be read',
      );
      lastLog = now;
      logged = count;
    },
    count: () => count,
  };
}
