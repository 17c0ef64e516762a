/** The contract every PubSub implementation passes (memory and Redis). */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { TestMessageEvent } from '../../src/domain/types.js';
import type { PubSub } from '../../src/pubsub/pubsub.js';
import { eventually } from '../support/graphql.js';
import { incoming, uniqueId } from '../store/store-contract.js';

const event = (correlationId: string, sequence: number): TestMessageEvent => ({
  message: { ...incoming(correlationId, { sequence }), receivedAt: 1_700_000_000_000 + sequence },
  status: 'RUNNING',
});

/** Registers the suite. `create` returns two handles on the same bus (two replicas, or the same one twice). */
export function describePubSubContract(name: string, create: () => Promise<[PubSub, PubSub]> | [PubSub, PubSub]): void {
  describe(`PubSub contract: ${name}`, () => {
    let a: PubSub;
    let b: PubSub;
    beforeEach(async () => {
      [a, b] = await create();
    });
    afterEach(async () => {
      await a.dispose();
      await b.dispose();
    });

    it('delivers events of one test, in publish order, to its listeners only, on every handle', async () => {
      const id = uniqueId('ps');
      const other = uniqueId('ps-other');
      const onA: number[] = [];
      const onB: number[] = [];
      const onOther: number[] = [];
      await a.subscribe(id, (e) => onA.push(e.message.sequence as number));
      await b.subscribe(id, (e) => onB.push(e.message.sequence as number));
      await b.subscribe(other, (e) => onOther.push(e.message.sequence as number));
      for (let seq = 1; seq <= 20; seq++) await a.publish(event(id, seq));
      await eventually(() => onA.length === 20 && onB.length === 20, 5000, 'all events');
      expect(onA).toEqual(Array.from({ length: 20 }, (_, i) => i + 1));
      expect(onB).toEqual(onA);
      expect(onOther).toEqual([]);
    });

    it('carries the whole event intact', async () => {
      const id = uniqueId('ps');
      const got: TestMessageEvent[] = [];
      await b.subscribe(id, (e) => got.push(e));
      const sent = { ...event(id, 7), status: 'COMPLETED' as const };
      await a.publish(sent);
      await eventually(() => got.length === 1, 5000, 'the event');
      expect(got[0]).toEqual(sent);
    });

    it('stops delivering after unsubscribe, and keeps other listeners of the same test', async () => {
      const id = uniqueId('ps');
      const first: number[] = [];
      const second: number[] = [];
      const stopFirst = await b.subscribe(id, (e) => first.push(e.message.sequence as number));
      await b.subscribe(id, (e) => second.push(e.message.sequence as number));
      await a.publish(event(id, 1));
      await eventually(() => first.length === 1 && second.length === 1, 5000, 'first event');
      stopFirst();
      stopFirst(); // twice is harmless
      await a.publish(event(id, 2));
      await eventually(() => second.length === 2, 5000, 'second event');
      expect(first).toEqual([1]);
    });

    it('accepts publishing with nobody listening', async () => {
      await expect(a.publish(event(uniqueId('ps'), 1))).resolves.toBeUndefined();
    });
  });
}
