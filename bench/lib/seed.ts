/** Identical synthetic data for every server a benchmark compares. */
import type { ResultLog } from '../../src/log/result-log.js';

/** Stores `tests` tests of `messages` messages each (~100-byte payloads); returns their ids. */
export async function seed(log: ResultLog, tests: number, messages: number): Promise<string[]> {
  const ids = seedIds(tests);
  for (const [t, correlationId] of ids.entries()) {
    await log.create({ correlationId, input: { name: `seeded ${t}` }, owner: 'bench' });
    for (let sequence = 1; sequence <= messages; sequence++) {
      await log.append([
        {
          correlationId,
          key: `s:${sequence}`,
          messageId: null,
          sequence,
          status: sequence === messages ? 'COMPLETED' : 'RUNNING',
          final: sequence === messages,
          payload: { step: sequence, status: 'running', note: `measurement ${sequence} of the run`, value: sequence * 1.5 },
          producedAt: 1_790_000_000_000 + sequence,
        },
      ]);
    }
  }
  return ids;
}

/** The ids {@link seed} gives its `tests` tests (servers without a store, such as the fan-out ceiling, use them too). */
export function seedIds(tests: number): string[] {
  return Array.from({ length: tests }, (_, t) => `seed-${String(t).padStart(4, '0')}-0000-0000-000000000000`);
}

/**
 * Stores `tests` tests still receiving messages (`messages` each, none final), with ids of their
 * own; {@link feedLive} keeps them receiving.
 */
export async function seedLive(log: ResultLog, tests: number, messages: number): Promise<string[]> {
  const ids = liveIds(tests);
  for (const [t, correlationId] of ids.entries()) {
    await log.create({ correlationId, input: { name: `live ${t}` }, owner: 'bench' });
    await log.append(Array.from({ length: messages }, (_, i) => liveMessage(correlationId, i + 1)));
  }
  return ids;
}

/** The ids {@link seedLive} gives its `tests` tests. */
export function liveIds(tests: number): string[] {
  return Array.from({ length: tests }, (_, t) => `live-${String(t).padStart(4, '0')}-0000-0000-000000000000`);
}

/**
 * Appends `perSecond` messages a second to `ids` in turn, from `from + 1` on (ten ticks a second),
 * as the consumer would store them; answers the function that stops it.
 */
export function feedLive(log: ResultLog, ids: readonly string[], perSecond: number, from: number): () => void {
  if (ids.length === 0 || perSecond <= 0) return () => undefined;
  let sent = 0;
  const started = Date.now();
  const timer = setInterval(() => {
    const due = Math.floor(((Date.now() - started) / 1000) * perSecond);
    const batch = [];
    for (; sent < due; sent++) batch.push(liveMessage(ids[sent % ids.length] as string, from + 1 + Math.floor(sent / ids.length)));
    if (batch.length > 0) void log.append(batch);
  }, 100);
  timer.unref();
  return () => clearInterval(timer);
}

function liveMessage(correlationId: string, sequence: number) {
  return {
    correlationId,
    key: `l:${sequence}`,
    messageId: null,
    sequence,
    status: 'RUNNING' as const,
    final: false,
    payload: { step: sequence, status: 'running', note: `measurement ${sequence} of the run`, value: sequence * 1.5 },
    producedAt: 1_790_000_000_000 + sequence,
  };
}
