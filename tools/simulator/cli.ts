/**
 * The simulated external system on its own:
 *
 *   KAFKA_BROKERS=127.0.0.1:PORT npx tsx tools/simulator/cli.ts
 *
 * Environment: KAFKA_BROKERS (comma list, required), KAFKA_REQUESTS_TOPIC (default test-requests),
 * KAFKA_RESULTS_TOPIC (default test-results), SIMULATOR_STEPS, SIMULATOR_INTERVAL_MS.
 * Logs JSON lines on stdout; stops on SIGINT or SIGTERM.
 */
import { createSimulator } from './simulator.js';

const env = process.env;

function jsonLine(level: 'info' | 'error') {
  return (obj: object, msg?: string) => {
    process.stdout.write(`${JSON.stringify({ level, time: new Date().toISOString(), ...obj, ...(msg === undefined ? {} : { msg }) })}\n`);
  };
}
const logger = { info: jsonLine('info'), error: jsonLine('error') };

function intFromEnv(name: string): number | undefined {
  const raw = env[name];
  if (raw === undefined || raw === '') return undefined;
  const value = Number(raw);
  if (!Number.isInteger(value) || value < 0) {
    logger.error({ [name]: raw }, `${name} must be a non-negative integer`);
    process.exit(2);
  }
  return value;
}

const brokers = (env.KAFKA_BROKERS ?? '')
  .split(',')
  .map((b) => b.trim())
  .filter(Boolean);
if (brokers.length === 0) {
  logger.error({}, 'KAFKA_BROKERS is not set (e.g. KAFKA_BROKERS=127.0.0.1:9092)');
  process.exit(2);
}
const steps = intFromEnv('SIMULATOR_STEPS');
const intervalMs = intFromEnv('SIMULATOR_INTERVAL_MS');

const simulator = createSimulator({
  brokers,
  requestsTopic: env.KAFKA_REQUESTS_TOPIC || 'test-requests',
  resultsTopic: env.KAFKA_RESULTS_TOPIC || 'test-results',
  ...(steps === undefined ? {} : { steps }),
  ...(intervalMs === undefined ? {} : { intervalMs }),
  logger,
});

let stopping = false;
const stop = (signal: string) => {
  if (stopping) return;
  stopping = true;
  logger.info({ signal }, 'stopping');
  simulator.dispose().then(
    () => process.exit(0),
    (error: unknown) => {
      logger.error({ err: String(error) }, 'stopping failed');
      process.exit(1);
    },
  );
};
process.on('SIGINT', () => stop('SIGINT'));
process.on('SIGTERM', () => stop('SIGTERM'));

try {
  await simulator.start();
} catch (error) {
  logger.error({ err: String(error), brokers }, 'could not start');
  await simulator.dispose().catch(() => {});
  process.exit(1);
}
logger.info({ brokers, handled: simulator.handled }, 'simulator running');
