/**
 * A TCP proxy in front of a service, for the faults a client meets between it and the server: the
 * connections dropped (a network cut, a load balancer's reload), the connections silenced (a
 * network that stops carrying packets and sends no reset), the target moved (a request landing
 * on another replica, or on the same one restarted on another port), and a server slow to answer
 * (a loaded or distant one: what it sends reaches the client `latencyMs` later).
 */
import { createServer, connect, type AddressInfo, type Socket } from 'node:net';

/** A running proxy. */
export interface TcpProxy {
  /** `http://127.0.0.1:<port>` of the proxy. */
  readonly url: string;
  /** Connections opened through it so far. */
  readonly connections: number;
  /** Destroys every open connection, both sides (a reset): new connections are carried again. */
  cut(): void;
  /** Open connections carry nothing more either way, and stay open (a silent network); new connections are carried. */
  silence(): void;
  /** New connections go to `port` (on 127.0.0.1). */
  retarget(port: number): void;
  close(): Promise<void>;
}

/** Options of {@link startTcpProxy}. */
export interface TcpProxyOptions {
  /** What the server sends reaches the client this much later, in order (default 0: at once). */
  readonly latencyMs?: number;
}

/** Starts a proxy on a free port to `target` (`http://127.0.0.1:<port>` or a port). */
export async function startTcpProxy(target: string | number, options: TcpProxyOptions = {}): Promise<TcpProxy> {
  const latencyMs = options.latencyMs ?? 0;
  let port = typeof target === 'number' ? target : Number(new URL(target).port);
  const open = new Set<{ client: Socket; upstream: Socket }>();
  const silent = new Set<{ client: Socket; upstream: Socket }>();
  let connections = 0;
  const server = createServer((client) => {
    connections += 1;
    const upstream = connect(port, '127.0.0.1');
    const pair = { client, upstream };
    open.add(pair);
    client.pipe(upstream);
    const drop = () => {
      open.delete(pair);
      client.destroy();
      upstream.destroy();
    };
    client.on('error', drop).on('close', drop);
    if (latencyMs === 0) {
      upstream.pipe(client);
      upstream.on('error', drop).on('close', drop);
    } else {
      // Everything the server does reaches the client as late: its data (the same delay for every
      // chunk keeps them in order), its end and its close. A silenced or closed pair gets nothing more.
      const later = (step: () => void) => setTimeout(() => open.has(pair) && step(), latencyMs).unref();
      upstream.on('data', (chunk: Buffer) => later(() => client.write(chunk)));
      upstream.on('end', () => later(() => client.end()));
      upstream.on('error', () => later(drop)).on('close', () => later(drop));
    }
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    get connections() {
      return connections;
    },
    cut: () => {
      for (const { client, upstream } of open) {
        client.resetAndDestroy();
        upstream.destroy();
      }
      open.clear();
    },
    silence: () => {
      for (const { client, upstream } of open) {
        client.unpipe(upstream);
        upstream.unpipe(client);
        client.pause();
        upstream.pause();
        silent.add({ client, upstream });
      }
      open.clear();
    },
    retarget: (next) => {
      port = next;
    },
    close: async () => {
      for (const { client, upstream } of [...open, ...silent]) {
        client.destroy();
        upstream.destroy();
      }
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
