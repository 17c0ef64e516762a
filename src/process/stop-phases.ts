/**
 * The one shutdown of a process. Each long-lived part registers the phase it stops in; `stop()`
 * runs the phases in order and the parts of one phase together:
 *
 *   drain        HTTP requests and WebSockets finish or are closed (no new work comes in)
 *   ingest       the consumer stops fetching, commits what it stored and leaves; producers flush
 *   state        the result log and the issuer release what they hold
 *   connections  the clients those parts used (Redis connections), closed last
 *
 * A part that fails to stop is logged and the shutdown goes on: one stuck producer must not keep
 * the consumer's offsets uncommitted or the connections open.
 */
import type { Logger } from '../base/logger.js';
import { disposeOnce, type Disposable } from './disposable.js';

/** The stop phases, in the order they run. */
export const STOP_PHASES = ['drain', 'ingest', 'state', 'connections'] as const;

/** When a part stops, relative to the others (see {@link STOP_PHASES}). */
export type StopPhase = (typeof STOP_PHASES)[number];

/** The parts of a process and their shutdown. Disposing it is stopping it. */
export interface StopPhases extends Disposable {
  /**
   * Adds a part to stop in `phase`. A part added once the phase has begun (or the whole stop has
   * ended) is stopped at once, so nothing registered late is left running.
   */
  register(phase: StopPhase, name: string, part: Disposable): void;
  /** Stops every part, phase by phase. Safe to call twice (the second call waits for the first). */
  stop(): Promise<void>;
}

interface Part {
  readonly name: string;
  readonly part: Disposable;
}

/** Creates the stop phases of a process, with no part registered yet. */
export function createStopPhases(options: { logger: Logger }): StopPhases {
  const log = options.logger.child({ component: 'stop-phases' });
  const parts = new Map<StopPhase, Part[]>(STOP_PHASES.map((phase) => [phase, []]));
  const begun = new Set<StopPhase>();
  // Parts registered after their phase began; stop() waits for them as well.
  const late: Promise<void>[] = [];

  const stopPart = async (phase: StopPhase, { name, part }: Part): Promise<void> => {
    try {
      await part.dispose();
    } catch (error) {
      log.error({ err: error, phase, part: name }, 'a part failed to stop; stopping the others');
    }
  };

  const stop = disposeOnce(async () => {
    for (const phase of STOP_PHASES) {
      begun.add(phase);
      const inPhase = parts.get(phase) as Part[];
      if (inPhase.length === 0) continue;
      log.debug({ phase, parts: inPhase.map((p) => p.name) }, 'stopping');
      await Promise.all(inPhase.map((part) => stopPart(phase, part)));
    }
    // A late part may itself register another one while it stops: wait until none is left.
    while (late.length > 0) await Promise.all(late.splice(0));
  });

  return {
    register(phase, name, part) {
      if (!begun.has(phase)) {
        (parts.get(phase) as Part[]).push({ name, part });
        return;
      }
      log.warn({ phase, part: name }, 'part registered after its stop phase began; stopping it now');
      late.push(stopPart(phase, { name, part }));
    },
    stop,
    dispose: stop,
  };
}
