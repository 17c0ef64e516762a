/**
 * kafkajs 2.2.4 (unmaintained) keeps a connection whose request timed out, and sends the next
 * request on it. This drives kafkajs's own `Connection` against a TCP server that accepts and never
 * answers (a silent network, as far as the client can tell): with the workaround the timed-out
 * request's socket is destroyed, the connection says it is disconnected, and connecting again opens
 * a second socket; without it the connection stays "connected" on the first.
 */
import { once } from 'node:events';
import { createRequire } from 'node:module';
import { createServer, type AddressInfo, type Server, type Socket } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { kafkajsTimedOutConnectionPatched } from '../../../src/ingest/kafkajs-timed-out-connection.js';

const require = createRequire(import.meta.url);

interface KafkajsConnection {
  socket: Socket;
  connect(): Promise<boolean>;
  isConnected(): boolean;
  disconnect(): Promise<boolean>;
  send(request: unknown): Promise<unknown>;
}
const Connection = require('kafkajs/src/network/connection.js') as new (options: Record<string, unknown>) => KafkajsConnection;
const socketFactory = (require('kafkajs/src/network/socketFactory.js') as () => unknown)();
const { createLogger } = require('kafkajs/src/loggers/index.js') as { createLogger: (options: Record<string, unknown>) => unknown };
const apiVersions = require('kafkajs/src/protocol/requests/apiVersions/index.js') as { protocol: (v: { version: number }) => () => unknown };

const servers: Array<{ server: Server; sockets: Socket[] }> = [];
afterEach(async () => {
  for (const { server, sockets } of servers.splice(0)) {
    for (const socket of sockets) socket.destroy();
    await new Promise((resolve) => server.close(resolve));
  }
});

/** A server that accepts connections and never writes a byte; counts them. */
async function silentServer(): Promise<{ port: number; sockets: Socket[] }> {
  const sockets: Socket[] = [];
  const server = createServer((socket) => {
    sockets.push(socket);
    socket.on('error', () => undefined);
  });
  servers.push({ server, sockets });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  server.unref();
  return { port: (server.address() as AddressInfo).port, sockets };
}

describe('kafkajs: a connection whose request timed out', () => {
  it('is on the release the workaround was written for', () => {
    expect(kafkajsTimedOutConnectionPatched).toBe(true);
  });

  it('is given up, and the next connect opens a new socket', async () => {
    const server = await silentServer();
    const connection = new Connection({
      host: '127.0.0.1',
      port: server.port,
      logger: createLogger({ level: 0, logCreator: () => () => undefined }),
      socketFactory,
      requestTimeout: 300,
      connectionTimeout: 1000,
    });
    await connection.connect();
    const first = connection.socket;
    const sent = connection.send(apiVersions.protocol({ version: 0 })());
    await expect(sent).rejects.toMatchObject({ name: 'KafkaJSRequestTimeoutError' });
    expect(first.destroyed).toBe(true);
    await expect.poll(() => connection.isConnected()).toBe(false);
    await connection.connect();
    expect(connection.socket).not.toBe(first);
    await expect.poll(() => server.sockets.length).toBe(2);
    connection.socket.destroy();
  });
});
