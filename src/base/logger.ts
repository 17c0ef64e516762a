/**
 * Structured JSON logging. Components receive a `Logger` rather than creating one, so tests can
 * pass a silent or capturing logger.
 */
import { pino, type Logger as PinoLogger } from 'pino';

/** Secret fields at the top of a log object and up to three levels down (`config.kafka.sasl.password`). */
const SECRET_PATHS = [
  'password',
  '*.password',
  '*.*.password',
  '*.*.*.password',
  'passphrase',
  '*.passphrase',
  '*.*.passphrase',
  'ssl.key',
  '*.ssl.key',
  '*.*.ssl.key',
];

/** The logger every component takes. One JSON object per line on stdout. */
export type Logger = PinoLogger;

/**
 * Lines waiting for stdout, at most: a log reader that stalls (a full pipe) must not grow the heap
 * while records or requests keep producing lines (one per malformed record, say). Past it, lines
 * are dropped, not buffered.
 */
const LOG_BUFFER_BYTES = 16 * 1024 * 1024;

/** Creates the process logger. */
export function createLogger(options: { level: string; name?: string }): Logger {
  const stdout = pino.destination({ dest: 1, sync: false, maxLength: LOG_BUFFER_BYTES });
  return pino(
    {
      name: options.name ?? 'result-collection-service',
      level: options.level,
      // ISO times read better in aggregated logs than epoch numbers.
      timestamp: pino.stdTimeFunctions.isoTime,
      formatters: { level: (label) => ({ level: label }) },
      // A second guard behind the config objects that redact themselves: a secret field handed to
      // a log call under one of these names is never written out.
      redact: { paths: SECRET_PATHS, censor: '[redacted]' },
    },
    stdout,
  );
}

/** A logger that discards everything; for tests and tools. */
export function createSilentLogger(): Logger {
  return pino({ level: 'silent' });
}
