/**
 * A logger for a test that keeps its last lines in memory, so that a failure can say what the
 * service logged before it (a fault test's logs are silent otherwise, to keep the run readable).
 * At most `max` lines are kept, each cut to 2,000 characters.
 */
import { pino } from 'pino';
import type { Logger } from '../../src/base/logger.js';

/** A logger and what it wrote last. */
export interface RecentLogLines {
  readonly logger: Logger;
  /** The lines kept, oldest first. */
  lines(): readonly string[];
}

/** Keeps the last `max` lines at `level` and above (`TEST_LOG_LEVEL` when set). */
export function recentLogLines(level: string, max = 100): RecentLogLines {
  const kept: string[] = [];
  const logger = pino(
    { level: process.env.TEST_LOG_LEVEL ?? level },
    {
      write(line: string) {
        kept.push(line.length > 2000 ? `${line.slice(0, 2000)}…` : line.trimEnd());
        if (kept.length > max) kept.shift();
      },
    },
  );
  return { logger, lines: () => kept };
}
