/**
 * Ports for processes that must know theirs before they listen (a Kafka or Redis node, a service
 * whose redirect URI names its port).
 */
import { createServer } from 'node:net';

// Ports handed out by this process: one that was probed free stays free until its owner binds it,
// and must not be handed to a second owner meanwhile.
const handedOut = new Set<number>();

/**
 * A TCP port on 127.0.0.1 that was free a moment ago and that this process has not handed out.
 * Chosen below the kernel's ephemeral range (32768 and up on Linux): a port from that range can be
 * taken by any outgoing connection (to Redis, to Kafka) between the probe and the listen, and was.
 */
export async function freePort(): Promise<number> {
  for (let attempt = 0; attempt < 100; attempt++) {
    const port = 20_000 + Math.floor(Math.random() * 12_000);
    if (handedOut.has(port) || !(await canListen(port))) continue;
    handedOut.add(port);
    return port;
  }
  throw new Error('no free port found between 20000 and 32000');
}

function canListen(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const server = createServer();
    server.once('error', () => resolve(false));
    server.listen(port, '127.0.0.1', () => server.close(() => resolve(true)));
  });
}
