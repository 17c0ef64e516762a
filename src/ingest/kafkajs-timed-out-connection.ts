/**
 * A workaround for kafkajs 2.2.4, which is unmaintained upstream: a connection whose request timed
 * out is kept. When the network under a connection stops carrying packets without a reset (a NAT
 * or load balancer that forgot the flow, a proxy that hung, a broker replaced behind its address),
 * kafkajs times each request out (`requestTimeout`, 30 s) and sends the next one on the same
 * socket, where it times out too: the consumer neither fetched nor heartbeated nor crashed, and
 * results stopped until the consumer's stall watch replaced the whole client (128.4–128.7 s measured,
 * test/kafka/silent-kafka-connection.test.ts), though a new connection to the same broker worked
 * all along. Kafka's own Java client gives a connection up when one of its requests times out
 * (`NetworkClient`: "Disconnecting from node … due to request timeout"); this does the same: the
 * socket is destroyed with an error, which kafkajs handles as it handles a reset (the connection's
 * other requests fail as retriable connection errors, the connection is marked disconnected, and
 * the next request opens a new one).
 *
 * Every kafkajs client of the process gets it (the result and request consumers, the request
 * publisher). Importing the module applies it, once; on any other kafkajs release it changes
 * nothing (test/unit/ingest/kafkajs-timed-out-connection.test.ts then fails, so the next upgrade
 * looks at it again).
 */
import type { Socket } from 'node:net';
import { kafkajsIsPatchedRelease, requireKafkajsModule } from './kafkajs-internals.js';

/** What this patch touches of kafkajs's `Connection`. */
interface Connection {
  socket?: Socket;
  host: string;
  port: number;
  send(request: unknown): Promise<unknown>;
}

type Send = Connection['send'] & { [GIVES_UP]?: true };

/** Marks the replacement, so that loading this module again (a test runner's fresh module graph) does not wrap it twice. */
const GIVES_UP = Symbol.for('result-collection-service.kafkajs-timed-out-connection');

/** True when the installed kafkajs's connections are given up on a request timeout. */
export const kafkajsTimedOutConnectionPatched = kafkajsIsPatchedRelease;

/** Whether `error` is kafkajs's request timeout (matched by name, as kafkajs's runner matches its own errors). */
function isRequestTimeout(error: unknown): boolean {
  return error instanceof Error && error.name === 'KafkaJSRequestTimeoutError';
}

if (kafkajsTimedOutConnectionPatched) {
  const { prototype } = requireKafkajsModule<{ prototype: Connection }>('kafkajs/src/network/connection.js');
  const send: Send = prototype.send;
  if (send[GIVES_UP] !== true) {
    const givingUp: Send = async function givingUpSend(this: Connection, request: unknown) {
      // The socket the request goes out on: a connection opened again meanwhile is not given up for it.
      const socket = this.socket;
      try {
        return await send.call(this, request);
      } catch (error) {
        if (isRequestTimeout(error) && socket !== undefined && socket === this.socket && !socket.destroyed)
          socket.destroy(new Error(`a request to ${this.host}:${this.port} timed out: the connection is given up and opened again`));
        throw error;
      }
    };
    givingUp[GIVES_UP] = true;
    prototype.send = givingUp;
  }
}
