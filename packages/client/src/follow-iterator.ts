/**
 * {@link follow} as an async iterator: `for await (const message of followIterator(id, options))`.
 * A message is taken (its cursor kept, the stream moved on) when the loop asks for the next one, that
 * is when its body finished with it; the loop ends when the test's stream completed or the follow was
 * stopped (`options.signal`), and throws a {@link FollowError} when the follow failed.
 */
import { follow } from './follow.js';
import type { FollowEnd, FollowOptions, FollowedMessage } from './types.js';

/** Options of {@link followIterator}: {@link FollowOptions} but `onMessage`, since the loop takes the messages. */
export type FollowIteratorOptions = Omit<FollowOptions, 'onMessage'>;

/** A follow that failed, thrown by the loop of {@link followIterator}: `code` says why (see {@link FollowEnd}). */
export class FollowError extends Error {
  readonly code: string;

  constructor(end: Extract<FollowEnd, { status: 'failed' }>) {
    super(end.message);
    this.name = 'FollowError';
    this.code = end.code;
  }
}

/** The message handed to the loop, until the loop asks for the next one (taken) or leaves (not taken). */
interface Offer {
  readonly message: FollowedMessage;
  given: boolean;
  readonly take: () => void;
  readonly refuse: (reason: Error) => void;
}

/**
 * Follows `correlationId` as an async iterator of its messages, each once and in order across
 * reconnects. Leaving the loop early (`break`, `return`, a throw) does not take the message its body
 * was given, so a follow that resumes from a persistent cursor store hands it over again; to stop
 * after a message was handled, abort `options.signal` and let the loop ask for the next one.
 */
export function followIterator(correlationId: string, options: FollowIteratorOptions): AsyncIterableIterator<FollowedMessage> {
  let offer: Offer | undefined;
  let waiting: ((result: IteratorResult<FollowedMessage>) => void) | undefined;
  let failed: ((error: FollowError) => void) | undefined;
  let end: FollowEnd | undefined;

  const following = follow(correlationId, {
    ...options,
    onMessage: (message) =>
      new Promise<void>((take, refuse) => {
        offer = { message, given: waiting !== undefined, take, refuse };
        const waiter = waiting;
        waiting = failed = undefined;
        waiter?.({ value: message, done: false });
      }),
  });

  /** The loop's end once the follow is over: every hand-over finished and its cursor kept. */
  const finish = async (over: FollowEnd): Promise<IteratorResult<FollowedMessage>> => {
    await following.stop();
    if (over.status === 'failed') throw new FollowError(over);
    return { value: undefined, done: true };
  };
  void following.done.then((over) => {
    end = over;
    const waiter = waiting;
    const fail = failed;
    waiting = failed = undefined;
    if (waiter === undefined) return;
    void finish(over).then(waiter, fail);
  });

  return {
    [Symbol.asyncIterator]() {
      return this;
    },
    next() {
      if (offer?.given === true) {
        // The loop finished with the message it was given: taken.
        offer.take();
        offer = undefined;
      }
      if (offer !== undefined) {
        offer.given = true;
        return Promise.resolve({ value: offer.message, done: false });
      }
      if (end !== undefined) return finish(end);
      return new Promise((resolve, reject) => {
        waiting = resolve;
        failed = reject;
      });
    },
    async return() {
      // The loop was left: the message its body had is not taken, and the follow ends.
      if (offer === undefined) await following.stop();
      else offer.refuse(new Error('the loop following the test was left'));
      offer = undefined;
      await following.done;
      return { value: undefined, done: true };
    },
  };
}
