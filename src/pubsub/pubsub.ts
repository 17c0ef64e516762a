/**
 * The live-update seam: newly stored messages are published here and subscriptions listen per
 * correlation id. In memory for one process; a Redis implementation carries events across replicas.
 */
import type { TestMessageEvent } from '../domain/types.js';

/** Called for every event of the subscribed test, in publish order. Must not throw. */
export type EventListener = (event: TestMessageEvent) => void;

/** Publish/subscribe of message events keyed by correlation id. */
export interface PubSub {
  /** Delivers the event to every current listener of its test. */
  publish(event: TestMessageEvent): Promise<void>;
  /** Starts listening; resolves once events published from now on will be delivered. */
  subscribe(correlationId: string, listener: EventListener): Promise<() => void>;
  /** Listeners in this process, of one test or of all. */
  listenerCount(correlationId?: string): number;
  dispose(): Promise<void>;
}
