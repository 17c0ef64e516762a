/** Identical synthetic data for every server a benchmark compares. */
import type { ResultLog } from '../../src/log/result-log.js';

/** Stores `tests` tests of `messages` messages each (~100-byte payloads); returns their ids. */
export async function seed(log: ResultLog, tests: number, messages: number): Promise<string[]> {
  const ids: string[] = [];
  for (let t = 0; t < tests; t++) {
    const correlationId = `seed-${String(t).padStart(4, '0')}-0000-0000-000000000000`;
    ids.push(correlationId);
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
