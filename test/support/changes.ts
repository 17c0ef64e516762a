/** Subscribing to `testChanges` in tests, and knowing when the subscription is live. */
import { randomUUID } from 'node:crypto';
import type { Client } from 'graphql-ws';
import type { ResultLog } from '../../src/log/result-log.js';
import { collect, createWsClient, eventually, type Collected } from './graphql.js';

/** A change as the tests select it. */
export type Change = {
  testChanges: { kind: string; test: { correlationId: string; status: string; messageCount: number; messages?: { totalCount: number } } };
};

/** An open `testChanges` subscription. */
export interface ChangesSubscription {
  readonly client: Client;
  readonly changes: Collected<Change>;
  /** The probe tests started to see the subscription live (they are changes it received, or missed while it was not yet live). */
  readonly probes: string[];
  /** The changes received of the tests named. */
  of(...ids: string[]): Array<Change['testChanges']>;
}

/**
 * Subscribes to `query` on `url` with `token`, and returns once the subscription is live: once a
 * probe test of `owner` (whose changes the token may see), started in `probeLog`, arrives. The
 * service answers the subscribe asynchronously, so nothing else tells a client when it is.
 */
export async function subscribeChanges(options: {
  url: string;
  token: string;
  query: string;
  owner: string;
  probeLog: ResultLog;
}): Promise<ChangesSubscription> {
  const client = createWsClient(options.url, { connectionParams: { authorization: `Bearer ${options.token}` } });
  const changes = collect<Change>(client, options.query);
  const probes: string[] = [];
  await eventually(
    async () => {
      const probe = `probe-${randomUUID()}`;
      probes.push(probe);
      await options.probeLog.create({ correlationId: probe, input: null, owner: options.owner });
      await new Promise((resolve) => setTimeout(resolve, 50));
      return changes.results.length > 0;
    },
    10_000,
    `the testChanges subscription of ${options.owner} to be live`,
  );
  const of = (...ids: string[]) =>
    changes.results.map((r) => r.data?.testChanges).filter((c): c is Change['testChanges'] => c !== undefined && ids.includes(c.test.correlationId));
  return { client, changes, probes, of };
}
