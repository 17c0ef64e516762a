/**
 * Runs another worker with tracing on, as main.ts does: the OpenTelemetry SDK (with its
 * instrumentations and an OTLP exporter to `<endpoint>`) starts before the worker's modules load.
 * Usage: traced.ts <otlp endpoint> <sample ratio of new traces> <worker> <worker args…>
 */
import { startTelemetry } from '../../src/telemetry/start-telemetry.js';

const [endpoint = '', ratio = '1', worker = ''] = process.argv.splice(2, 3);
const telemetry = await startTelemetry({ serviceName: 'result-collection-service', otlpEndpoint: new URL(endpoint), sampleRatio: Number(ratio) });
// Workers end with process.exit once measured: export what is still batched first, so the
// receiver's count is complete (the measurement is over by then).
const exit = process.exit.bind(process);
process.exit = ((code?: number) => void telemetry.shutdown().finally(() => exit(code))) as typeof process.exit;
await import(`./${worker}.js`);
