/**
 * The WebSocket heartbeat's cost to the event loop, pings sent all in one turn against spread over
 * the interval (src/graphql/ws/ws-heartbeat.ts), on real sockets: a server with the heartbeat and
 * `--sockets` clients in a child process that answer every ping, the server's event-loop delay
 * (max and p99) and CPU measured over 9 s of a 3 s interval, the two ways alternating for
 * `--rounds` rounds. Run: `npx tsx bench/heartbeat-spread.ts [--sockets=10000] [--rounds=2]`.
 */
import { fork } from 'node:child_process';
import { once } from 'node:events';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';
import { WebSocket, WebSocketServer } from 'ws';
import { startWsHeartbeat } from '../src/graphql/ws/ws-heartbeat.js';

const INTERVAL_MS = 3000;
const option = (name: string, fallback: number) => Number(process.argv.find((a) => a.startsWith(`--${name}=`))?.split('=')[1] ?? fallback);

/** The clients' side: opens `n` sockets to `url` (500 at a time), then tells the parent. */
async function clients(n: number, url: string): Promise<void> {
  const sockets: WebSocket[] = [];
  for (let i = 0; i < n; i += 500) {
    const batch = Array.from({ length: Math.min(500, n - i) }, async () => {
      const socket = new WebSocket(url);
      sockets.push(socket);
      await once(socket, 'open');
    });
    await Promise.all(batch);
  }
  process.send?.('ready');
}

/** One measurement: `slices` ticks per interval (1: every socket in one turn). */
async function measure(slices: number, n: number): Promise<{ slices: number; maxMs: number; p99Ms: number; cpuMs: number }> {
  const server = new WebSocketServer({ port: 0, host: '127.0.0.1' });
  await once(server, 'listening');
  const url = `ws://127.0.0.1:${(server.address() as { port: number }).port}`;
  const child = fork(fileURLToPath(import.meta.url), ['--clients', String(n), url], { execArgv: ['--import', 'tsx'] });
  try {
    await once(child, 'message');
    const heartbeat = startWsHeartbeat({ clients: server.clients, intervalMs: INTERVAL_MS, slices });
    for (const socket of server.clients) heartbeat.add(socket);
    await new Promise((resolve) => setTimeout(resolve, 1000));
    const delay = monitorEventLoopDelay({ resolution: 1 });
    delay.enable();
    const cpu = process.cpuUsage();
    await new Promise((resolve) => setTimeout(resolve, 3 * INTERVAL_MS));
    delay.disable();
    const used = process.cpuUsage(cpu);
    heartbeat.stop();
    return { slices, maxMs: delay.max / 1e6, p99Ms: delay.percentile(99) / 1e6, cpuMs: (used.user + used.system) / 1000 };
  } finally {
    child.kill();
    for (const socket of server.clients) socket.terminate();
    server.close();
  }
}

if (process.argv[2] === '--clients') {
  await clients(Number(process.argv[3]), process.argv[4] as string);
} else {
  const n = option('sockets', 10_000);
  const rows = [];
  for (let round = 0; round < option('rounds', 2); round++) for (const slices of [1, 30]) rows.push(await measure(slices, n));
  console.log(`| ${n.toLocaleString('en')} sockets, interval ${INTERVAL_MS} ms | event-loop delay max | p99 | CPU over 9 s |`);
  console.log('|---|---:|---:|---:|');
  for (const r of rows)
    console.log(`| ${r.slices === 1 ? 'one turn' : `${r.slices} ticks`} | ${r.maxMs.toFixed(1)} ms | ${r.p99Ms.toFixed(1)} ms | ${r.cpuMs.toFixed(0)} ms |`);
  process.exit(0);
}
