/**
 * The simulated external system on its own: `KAFKA_BROKERS=127.0.0.1:PORT npx tsx tools/simulator/cli.ts`.
 * Reads KAFKA_REQUESTS_TOPIC, KAFKA_RESULTS_TOPIC, SIMULATOR_STEPS, SIMULATOR_INTERVAL_MS.
 */
import { createSimulator } from './simulator.js';

const env = process.env;
const brokers = (env.KAFKA_BROKERS ?? '127.0.0.1:9092').split(',');
const line = (level: string) => (obj: object, msg?: string) => process.stdout.write(`${JSON.stringify({ level, time: new Date().toISOString(), ...obj, msg })}\n`);
const simulator = createSimulator({
  brokers,
  requestsTopic: env.KAFKA_REQUESTS_TOPIC ?? 'test-requests',
  resultsTopic: env.KAFKA_RESULTS_TOPIC ?? 'test-results',
  ...(env.SIMULATOR_STEPS ? { steps: Number(env.SIMULATOR_STEPS) } : {}),
  ...(env.SIMULATOR_INTERVAL_MS ? { intervalMs: Number(env.SIMULATOR_INTERVAL_MS) } : {}),
  logger: { info: line('info'), error: line('error') },
});
await simulator.start();
line('info')({ brokers }, 'simulator running');
const stop = () => void simulator.dispose().then(() => process.exit(0));
process.once('SIGINT', stop);
process.once('SIGTERM', stop);
