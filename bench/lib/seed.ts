/** Identical synthetic data for every server a benchmark compares. */
import type { ResultLog } from '../../src/log/result-log.js';

/** Stores `tests` tests of `messages` messages each (~100-byte payloads); returns their ids. */
export async function seed(log: ResultLog, tests: number, messages: number): Promise<string[]> {
  const ids = seedIds(tests);
  for (const [t, correlationId] of ids.entries()) {
    await log.create({ correlationId, input: { name: `seeded ${t}` }, owner: 'bench' });
    for (let sequence = 1; sequence <= messages; sequence++) {
      await log.append([{
        correlationId,
        key: `s:${sequence}`,
        messageId: null,
        sequence,
        status: sequence === messages ? 'COMPLETED' : 'RUNNING',
        final: sequence === messages,
        payload: { step: sequence, status: 'running', note: `measurement ${sequence} of the run`, value: sequence * 1.5 },
        producedAt: 1_790_000_000_000 + sequence,
      }]);
    }
  }
  return ids;
}

/** The ids {@link seed} gives its `tests` tests (servers without a store, such as the fan-out ceiling, use them too). */
export function seedIds(tests: number): string[] {
  return Array.from({ length: tests }, (_, t) => `seed-${String(t).padStart(4, '0')}-0000-0000-000000000000`);
}
