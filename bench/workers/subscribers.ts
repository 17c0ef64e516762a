/**
 * Opens `perTest` graphql-ws subscriptions to each given test and records, for every push, the
 * time since the record's `sentAt`. Prints `{ subscribed }` once every subscription is live, then
 * the latency summary once `expected` pushes arrived per subscriber set (or after a timeout), with
 * the size and shape of the first pushed frame received.
 * Usage: subscribers.ts <url> <token> <perTest> <records> <id>...
 */
import { createClient } from 'graphql-ws';
import WebSocket from 'ws';
import { percentile } from '../lib/worker.js';

const [url = '', token = '', perTestArg = '1', recordsArg = '0', ...ids] = process.argv.slice(2);
const perTest = Number(perTestArg);
const expected = Number(recordsArg) * perTest;
const latencies: number[] = [];
const wsUrl = `${url.replace(/^http/, 'ws')}/graphql`;
const QUERY = 'subscription($id: ID!) { testMessages(correlationId: $id) { sequence payload } }';

// The first pushed frame any socket receives, as written on the wire: the fan-out benchmark compares
// it between the service and its ceiling. Each socket listens only until one frame was taken.
let frame: string | undefined;
class TappedWebSocket extends WebSocket {
  constructor(address: string, protocols?: string | string[]) {
    super(address, protocols);
    const tap = (data: Buffer) => {
      if (frame === undefined && data.includes('"testMessages"')) frame = data.toString();
      if (frame !== undefined) this.off('message', tap);
    };
    this.on('message', tap);
  }
}
/** The frame with its subscription id and digits masked, so frames of two servers compare equal. */
const shape = (text: string) => text.replace(/"id":"[^"]*"/, '"id":"?"').replace(/\d/g, '0');

let done!: () => void;
const finished = new Promise<void>((resolve) => (done = resolve));
const total = ids.length * perTest;
// Several subscriptions share one socket when there are many, as a dashboard showing many tests would.
const perSocket = Math.max(1, Math.ceil(total / 2000));
const clients = [];
let opened = 0;
/** Subscriptions the server ended before the last push, by close code. */
const cutOff = new Map<string, number>();
for (const id of ids) {
  for (let i = 0; i < perTest; i++) {
    if (opened % perSocket === 0)
      clients.push(
        createClient({ url: wsUrl, webSocketImpl: TappedWebSocket, connectionParams: { authorization: `Bearer ${token}` }, retryAttempts: 0, lazy: false }),
      );
    opened += 1;
    const client = clients.at(-1) as ReturnType<typeof createClient>;
    const iterator = client.iterate<{ testMessages: { sequence: number; payload: { sentAt: number } } }>({ query: QUERY, variables: { id } });
    void (async () => {
      try {
        for await (const result of iterator) {
          const sentAt = result.data?.testMessages.payload.sentAt;
          if (sentAt !== undefined) latencies.push(Date.now() - sentAt);
          if (latencies.length >= expected) done();
        }
      } catch (error) {
        // A subscription the server ended (a socket cut off as too slow to read, say) is counted
        // and reported with its close code; its missing pushes show as lost.
        const code = String((error as { code?: unknown }).code ?? 'error');
        cutOff.set(code, (cutOff.get(code) ?? 0) + 1);
        if ([...cutOff.values()].reduce((a, b) => a + b, 0) === total) done();
      }
    })();
  }
}
// A subscription is live once the server answered on its socket; a query per socket proves it.
await Promise.all(
  clients.map(
    (c) => new Promise<void>((resolve, reject) => c.subscribe({ query: '{ __typename }' }, { next: () => undefined, error: reject, complete: resolve })),
  ),
);
const acknowledged = total;
console.log(JSON.stringify({ subscribed: acknowledged }));
// SUBSCRIBERS_TIMEOUT_MS: scenarios that produce for long (the rebalance benchmark) wait longer.
const timeout = setTimeout(done, Number(process.env.SUBSCRIBERS_TIMEOUT_MS ?? 30_000 + expected));
await finished;
clearTimeout(timeout);
const sorted = [...latencies].sort((a, b) => a - b);
console.log(
  JSON.stringify({
    received: latencies.length,
    expected,
    p50: percentile(sorted, 50),
    p99: percentile(sorted, 99),
    max: sorted.at(-1) ?? Number.NaN,
    ...(cutOff.size === 0 ? {} : { cutOff: Object.fromEntries(cutOff) }),
    ...(frame === undefined ? {} : { frameBytes: Buffer.byteLength(frame), frameShape: shape(frame) }),
  }),
);
process.exit(0);
