/**
 * Structured JSON logging. Components receive a `Logger` rather than creating one, so tests can
 * pass a silent or capturing logger.
 */
import { pino, type Logger as PinoLogger } from 'pino';

/** The logger every component takes. One JSON object per line on stdout. */
export type Logger = PinoLogger;

/** Creates the process logger. */
export function createLogger(options: { level: string; name?: string }): Logger {
  return pino({
    name: options.name ?? 'result-collection-service',
    level: options.level,
    // ISO times read better in aggregated logs than epoch numbers.
    timestamp: pino.stdTimeFunctions.isoTime,
    formatters: { level: (label) => ({ level: label }) },
  });
}

/** A logger that discards everything; for tests and tools. */
export function createSilentLogger(): Logger {
  return pino({ level: 'silent' });
}
