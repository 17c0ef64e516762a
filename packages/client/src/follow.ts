/**
 * Follows one test's messages and hands each to the application once, in the order the service
 * delivers them, across every reconnect: a lost network, a replica killed or drained behind a load
 * balancer, a renewed token, a server restart. Each attempt subscribes with `after` set to the
 * cursor of the last message the application took (kept in the cursor store), so the service
 * replays exactly what followed it; an attempt's end is read by its stable code (`next-step.ts`)
 * to resume, renew the token, wait, or stop for good and say why.
 */
import type { Attempt, AttemptEnd, Pushed } from './attempt.js';
import { createMemoryCursorStore } from './memory-cursor-store.js';
import { nextStep } from './next-step.js';
import { oneSpelling } from './one-spelling.js';
import { FollowTest } from './operation.js';
import { createSeenIds } from './seen-ids.js';
import { openSseAttempt } from './sse-attempt.js';
import type { DeliveryGranted, FollowEnd, FollowOptions, FollowState, Following } from './types.js';
import { openWsAttempt } from './ws-attempt.js';

const DEFAULT_DEAD_AFTER_MS = 30_000;
const FIRST_RETRY_WAIT_MS = 250;

/** What one attempt came to: how it ended and how many messages the application took from it, or the follow's end. */
type Outcome = { readonly end: AttemptEnd; readonly taken: number } | { readonly over: FollowEnd };

/** Starts following `spelled` (a UUID in either case); see {@link FollowOptions}. */
export function follow(spelled: string, options: FollowOptions): Following {
  // Its cursor is kept under the id's one spelling: a reload that spells it otherwise resumes too.
  const correlationId = oneSpelling(spelled);
  const store = options.cursorStore ?? createMemoryCursorStore();
  const open = options.transport === 'ws' ? openWsAttempt : openSseAttempt;
  const seen = createSeenIds(10_000);
  let stopped = false;
  let interrupt: (() => void) | undefined;
  // A browser that comes back online: the open connection may be one the network dropped without a
  // word (a browser's offline mode lets a WebSocket stay open and read nothing), and a wait for the
  // next attempt is no longer worth waiting.
  let nudge: (() => void) | undefined;
  let cursor: string | undefined;
  let delivery: DeliveryGranted | undefined;
  // The hand-over under way (the application's onMessage, then the cursor's write): stop() waits for it.
  let handing: Promise<void> = Promise.resolve();
  const tell = (state: FollowState) => {
    try {
      options.onState?.(state);
    } catch {
      // An observer's failure is its own; the follow goes on.
    }
  };

  /** One attempt: resolves once it ended and every message it pushed was taken (or the follow is over). */
  function attempt(token: string): Promise<Outcome> {
    return new Promise((resolve) => {
      let taken = 0;
      let live = false;
      let over = false;
      let queue = Promise.resolve();
      let current: Attempt | undefined = undefined;
      const finish = (outcome: Outcome) => {
        if (over) return;
        over = true;
        interrupt = undefined;
        nudge = undefined;
        resolve(outcome);
      };
      const take = async ({ message, delivery: note }: Pushed) => {
        if (over || stopped) return;
        if (note?.guarantee !== undefined) delivery = note as unknown as DeliveryGranted;
        if (note?.catchingUp === true) {
          live = false;
          tell({ status: 'catching-up', behind: Number(note.behind ?? 0), ...(delivery ? { delivery } : {}) });
        } else if (!live || note?.live === true) {
          live = true;
          tell({ status: 'live', ...(delivery ? { delivery } : {}) });
        }
        if (seen.has(message.id)) return;
        try {
          await options.onMessage(message);
        } catch (error) {
          current?.close();
          finish({ over: { status: 'failed', code: 'HANDLER_FAILED', message: error instanceof Error ? error.message : String(error) } });
          return;
        }
        seen.add(message.id);
        cursor = message.cursor;
        taken += 1;
        try {
          await store.set(correlationId, message.cursor);
        } catch (error) {
          // Taken, but where the next run resumes could not be kept: stop rather than go on unsure.
          current?.close();
          finish({ over: { status: 'failed', code: 'CURSOR_STORE_FAILED', message: error instanceof Error ? error.message : String(error) } });
        }
      };
      interrupt = () => {
        current?.close();
        finish({ over: { status: 'stopped' } });
      };
      nudge = () => {
        current?.close();
        void queue.then(() => finish({ end: { kind: 'network', message: 'back online' }, taken }));
      };
      current = open(
        {
          url: options.url,
          token,
          query: FollowTest.toString(),
          variables: cursor === undefined ? { id: correlationId } : { id: correlationId, after: cursor },
          extensions: { deliveryGuarantee: options.deliveryGuarantee ?? 'at-least-once' },
          deadAfterMs: options.deadAfterMs ?? DEFAULT_DEAD_AFTER_MS,
          ...(options.webSocketImpl === undefined ? {} : { webSocketImpl: options.webSocketImpl }),
          ...(options.fetch === undefined ? {} : { fetch: options.fetch }),
        },
        {
          push: (pushed) => void (handing = queue = queue.then(() => take(pushed))),
          end: (end) => void queue.then(() => finish({ end, taken })),
        },
      );
    });
  }

  /** Waits `ms`, or less if the follow is stopped meanwhile. */
  const pause = (ms: number) =>
    new Promise<void>((resolve) => {
      if (stopped) return resolve();
      const timer = setTimeout(resolve, ms);
      interrupt = nudge = () => {
        clearTimeout(timer);
        resolve();
      };
    });

  async function run(): Promise<FollowEnd> {
    // A cursor an earlier release kept under the spelling the application used is still found.
    cursor = (await store.get(correlationId)) ?? (spelled === correlationId ? undefined : await store.get(spelled));
    let fruitless = 0; // attempts in a row that handed nothing over
    let refusedTokens = 0;
    for (let n = 1; !stopped; n += 1) {
      tell({ status: 'connecting', attempt: n });
      let token: string;
      try {
        token = await options.getToken();
      } catch (error) {
        // A token that cannot be had now (a renewal while offline) is tried again, as a refused one is.
        refusedTokens += 1;
        if (refusedTokens > (options.maxAuthRetries ?? 3))
          return { status: 'failed', code: 'UNAUTHENTICATED', message: `no token could be had (${error instanceof Error ? error.message : String(error)})` };
        fruitless += 1;
        const waitMs = retryWait(fruitless, options.maxRetryWaitMs ?? 10_000);
        tell({ status: 'reconnecting', attempt: n + 1, waitMs, reason: 'no token' });
        await pause(waitMs);
        continue;
      }
      if (stopped) break;
      const outcome = await attempt(token);
      if ('over' in outcome) return outcome.over;
      const step = nextStep(outcome.end);
      if (!step.resume) return step.code === 'COMPLETED' ? { status: 'completed' } : { status: 'failed', code: step.code, message: step.message };
      fruitless = outcome.taken > 0 ? 0 : fruitless + 1;
      refusedTokens = step.renewToken && outcome.taken === 0 ? refusedTokens + 1 : 0;
      if (refusedTokens > (options.maxAuthRetries ?? 3))
        return { status: 'failed', code: 'UNAUTHENTICATED', message: `the token was refused ${refusedTokens} times in a row (${step.reason})` };
      const waitMs = Math.max(step.waitMs ?? 0, retryWait(fruitless, options.maxRetryWaitMs ?? 10_000));
      tell({ status: 'reconnecting', attempt: n + 1, waitMs, reason: step.reason });
      await pause(waitMs);
    }
    return { status: 'stopped' };
  }

  const online = () => nudge?.();
  const events = globalThis as {
    addEventListener?: (type: string, listener: () => void) => void;
    removeEventListener?: (type: string, listener: () => void) => void;
  };
  events.addEventListener?.('online', online);
  // An aborted signal stops the follow as stop() does; one aborted already stops it before it connects.
  const { signal } = options;
  const aborted = () => void stop();
  if (signal?.aborted === true) stopped = true;
  else signal?.addEventListener('abort', aborted, { once: true });
  const done = run()
    .finally(() => {
      events.removeEventListener?.('online', online);
      signal?.removeEventListener('abort', aborted);
    })
    .then(
      (end) => {
        tell(end);
        return end;
      },
      (error: unknown) => {
        const end: FollowEnd = { status: 'failed', code: 'CLIENT_FAILED', message: error instanceof Error ? error.message : String(error) };
        tell(end);
        return end;
      },
    );
  // Not to be awaited inside onMessage: it waits for that very hand-over to finish.
  async function stop(): Promise<void> {
    stopped = true;
    interrupt?.();
    await done;
    await handing;
  }
  return { done, stop };
}

/** At once after an attempt that handed something over; then 250 ms doubling to `max`, with up to a fifth more at random (replicas are not all hit at once). */
function retryWait(fruitless: number, max: number): number {
  if (fruitless === 0) return 0;
  const base = Math.min(max, FIRST_RETRY_WAIT_MS * 2 ** (fruitless - 1));
  return Math.round(base * (1 + Math.random() / 5));
}
