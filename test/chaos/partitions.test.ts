/**
 * The chaos run's network partitions, for real (nftables, as root): a cut silences what one user
 * sends to the given ports and nothing else, its heal restores it, and a run's table is its own (a
 * run beside it keeps its rules; a table left by a run that is gone is removed by the next).
 */
import { execFile, spawn } from 'node:child_process';
import { once } from 'node:events';
import { createServer, type AddressInfo, type Server } from 'node:net';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createPartitions, partitionUid, partitionsUnavailable, type Partitions } from '../../chaos/partitions.js';

const run = promisify(execFile);
const unavailable = await partitionsUnavailable();

/** Whether `uid` (undefined: this process's user) can open a TCP connection to `port` within `withinMs`. */
async function reaches(port: number, uid: number | undefined, withinMs = 1_500): Promise<boolean> {
  const script = `const s=require('node:net').connect(${port},'127.0.0.1');s.on('connect',()=>{process.stdout.write('up');process.exit(0)});s.on('error',()=>process.exit(1));setTimeout(()=>process.exit(2),${withinMs})`;
  const child = spawn(process.execPath, ['-e', script], { ...(uid === undefined ? {} : { uid, gid: uid }), stdio: ['ignore', 'pipe', 'ignore'] });
  let out = '';
  child.stdout.on('data', (chunk: Buffer) => (out += chunk.toString()));
  await once(child, 'exit');
  return out === 'up';
}

const tables = async () => (await run('nft', ['list', 'tables'])).stdout;

describe.skipIf(unavailable !== undefined)(`chaos partitions${unavailable === undefined ? '' : ` (skipped: ${unavailable})`}`, () => {
  let server: Server;
  let other: Server;
  let partitions: Partitions;
  beforeAll(async () => {
    server = createServer((socket) => socket.destroy()).listen(0, '127.0.0.1');
    other = createServer((socket) => socket.destroy()).listen(0, '127.0.0.1');
    await Promise.all([once(server, 'listening'), once(other, 'listening')]);
    partitions = await createPartitions();
  });
  afterAll(async () => {
    await partitions.dispose();
    expect(await tables()).not.toContain(`table inet rcs_chaos_${process.pid}\n`);
    server.close();
    other.close();
  });
  const portOf = (s: Server) => (s.address() as AddressInfo).port;

  it("silences one user's connections to the cut ports, and only those, until healed", async () => {
    const uid = partitionUid(1);
    expect(await reaches(portOf(server), uid)).toBe(true);
    const heal = await partitions.cut(uid, [portOf(server)]);
    expect(await reaches(portOf(server), uid)).toBe(false);
    expect(await reaches(portOf(other), uid)).toBe(true);
    expect(await reaches(portOf(server), partitionUid(2))).toBe(true);
    expect(await reaches(portOf(server), undefined)).toBe(true);
    await heal();
    expect(await reaches(portOf(server), uid)).toBe(true);
  });

  it("removes a table left by a run that is gone, and keeps a live run's", async () => {
    // A process id no process has (above the kernel's limit) stands for a run killed before its cleanup.
    const gone = 'rcs_chaos_99999999';
    const live = `rcs_chaos_${process.ppid}`;
    await run('nft', ['add', 'table', 'inet', gone]);
    await run('nft', ['add', 'table', 'inet', live]);
    try {
      // The next run to start (here, this process again: its table is added once, whoever asks).
      await createPartitions();
      const now = await tables();
      expect(now).not.toContain(`table inet ${gone}\n`);
      expect(now).toContain(`table inet ${live}\n`);
      expect(now).toContain(`table inet rcs_chaos_${process.pid}\n`);
    } finally {
      await run('nft', ['delete', 'table', 'inet', live]).catch(() => undefined);
      await run('nft', ['delete', 'table', 'inet', gone]).catch(() => undefined);
    }
  });
});
