/**
 * One redis-server process of a test topology (a cluster node, a Sentinel-managed server or a
 * sentinel), with the faults the tests inflict on it: SIGKILL, SIGTERM, SIGSTOP / SIGCONT, and a
 * restart on the same port with the same folder (so a cluster node keeps its nodes.conf identity).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { command, logTail, track, until } from './redis-process.js';

/** How long a node may take to answer PING after its process started. */
const START_TIMEOUT_MS = 15_000;
/** How long a restarted node may take to rejoin its topology. */
const REJOIN_TIMEOUT_MS = 30_000;
/** SIGTERM grace before SIGKILL (a primary waits up to `shutdown-timeout` for its replicas). */
const STOP_GRACE_MS = 5_000;

/** One redis-server of a cluster or of a Sentinel set. */
export interface RedisNode {
  readonly port: number;
  /** `127.0.0.1:port`. */
  readonly address: string;
  /** Kills the process with SIGKILL (no AOF flush, connections drop at once) and waits for it to exit. */
  kill(): Promise<void>;
  /** Stops the process with SIGTERM (a clean shutdown) and waits for it to exit. */
  stop(): Promise<void>;
  /**
   * Starts a stopped or killed node again on the same port with the same folder (nodes.conf, AOF)
   * and waits until it has rejoined: answers, agrees with the other nodes, and as a replica has
   * its replication link up.
   */
  restart(): Promise<void>;
  /** Freezes the process (SIGSTOP): it keeps its connections but answers nothing, like a network partition. */
  pause(): void;
  /** Lets a paused process run again (SIGCONT). */
  resume(): void;
  /** Its role now, from `ROLE` (fails while it is down or paused). */
  role(): Promise<'master' | 'slave'>;
}

/** What the topology knows of a node beyond the public face. */
export interface ManagedNode extends RedisNode {
  readonly dir: string;
  readonly logFile: string;
  /** Its process runs and is not paused: it can be asked. */
  readonly live: boolean;
  /** Starts the process and waits until it answers PING (not until it has rejoined). */
  launch(): Promise<void>;
  /** Sends `signal` (SIGCONT too, if paused, so it can act on it) and waits for the exit; SIGKILL after a grace. */
  halt(signal: 'SIGTERM' | 'SIGKILL'): Promise<void>;
  /** Sends one command to this node (bounded in time). */
  call(...args: string[]): Promise<unknown>;
}

/** How to run one node. */
export interface NodeSpec {
  readonly port: number;
  /** Its own folder (data, logs, pid file), created if missing. */
  readonly dir: string;
  /**
   * redis-server arguments (the first may be a configuration file, a sentinel's), or a function
   * that decides them at each start (a restarted Sentinel-managed server rejoins as a replica).
   */
  readonly args: readonly string[] | (() => Promise<readonly string[]>);
  /** The `requirepass` the node's own commands authenticate with. */
  readonly password?: string;
  /** A process group of its own, so a Ctrl-C at the terminal does not reach it. */
  readonly detached?: boolean;
  /** Whether the node has rejoined its topology after a restart (polled). */
  readonly rejoined: (node: ManagedNode) => Promise<boolean>;
}

/** The redis-server arguments every node of a topology shares. */
export function baseArgs(port: number, dir: string, password: string | undefined): string[] {
  // appendonly keeps writes across a SIGKILL and restart as a real outage would; no RDB snapshots
  // (their forks would only slow a small machine); a bounded shutdown so stop() is quick even when
  // a primary's replicas are gone. A primary sends a (re)starting replica its data at once: by
  // default it waits 5 s for more replicas to share the transfer, which only delays a restart here.
  const args = [
    '--port',
    String(port),
    '--bind',
    '127.0.0.1',
    '--dir',
    dir,
    '--logfile',
    join(dir, 'redis.log'),
    '--appendonly',
    'yes',
    '--save',
    '',
    '--shutdown-timeout',
    '2',
    '--repl-diskless-sync-delay',
    '0',
  ];
  if (password !== undefined) args.push('--requirepass', password, '--masterauth', password);
  return args;
}

/** A node not started yet: call `launch()`. */
export function createNode(spec: NodeSpec): ManagedNode {
  return new NodeProcess(spec);
}

class NodeProcess implements ManagedNode {
  readonly port: number;
  readonly address: string;
  readonly dir: string;
  readonly logFile: string;
  private child: ChildProcess | undefined;
  private exited: Promise<void> = Promise.resolve();
  private paused = false;

  constructor(private readonly spec: NodeSpec) {
    this.port = spec.port;
    this.address = `127.0.0.1:${spec.port}`;
    this.dir = spec.dir;
    this.logFile = join(spec.dir, 'redis.log');
  }

  get live(): boolean {
    return this.child !== undefined && !this.paused;
  }

  async launch(): Promise<void> {
    if (this.child !== undefined) throw new Error(`redis node ${this.port} is running`);
    await mkdir(this.dir, { recursive: true });
    const args = typeof this.spec.args === 'function' ? await this.spec.args() : this.spec.args;
    const started = spawn('redis-server', [...args], { stdio: ['ignore', 'ignore', 'pipe'], detached: this.spec.detached ?? false });
    track(started);
    let stderr = '';
    started.stderr?.on('data', (chunk: Buffer) => (stderr = (stderr + chunk.toString()).slice(-4000)));
    this.child = started;
    this.paused = false;
    this.exited = once(started, 'exit').then(() => {
      if (this.child === started) this.child = undefined;
    });
    // The watchdog kills the process by this file if the process that started it dies.
    await writeFile(join(this.dir, 'pid'), String(started.pid));
    const outcome = await until(`redis node ${this.port} to answer PING`, START_TIMEOUT_MS, async () => {
      // An exit (a port taken, a bad option) ends the wait at once rather than at the deadline.
      if (this.child !== started) return 'exited';
      return (await this.call('PING')) === 'PONG' && 'serving';
    }).catch((error: Error) => {
      throw new Error(`${error.message}\nsee ${this.logFile}`);
    });
    if (outcome === 'exited') throw new Error(`redis node ${this.port} exited while starting: ${stderr.trim()}\n${await logTail(this.logFile)}`);
  }

  async halt(signal: 'SIGTERM' | 'SIGKILL'): Promise<void> {
    const current = this.child;
    if (current === undefined) return;
    current.kill(signal);
    // A stopped process does not act on SIGTERM until it runs again.
    if (this.paused) current.kill('SIGCONT');
    this.paused = false;
    const killer = setTimeout(() => current.kill('SIGKILL'), STOP_GRACE_MS);
    await this.exited;
    clearTimeout(killer);
  }

  call(...args: string[]): Promise<unknown> {
    return command(this.port, this.spec.password, args);
  }

  kill(): Promise<void> {
    return this.halt('SIGKILL');
  }

  stop(): Promise<void> {
    return this.halt('SIGTERM');
  }

  async restart(): Promise<void> {
    if (this.child !== undefined) throw new Error(`redis node ${this.port} is running; stop or kill it first`);
    await this.launch();
    await until(`redis node ${this.port} to rejoin`, REJOIN_TIMEOUT_MS, () => this.spec.rejoined(this), 200);
  }

  pause(): void {
    this.signal('SIGSTOP');
  }

  resume(): void {
    this.signal('SIGCONT');
  }

  async role(): Promise<'master' | 'slave'> {
    const answer = (await this.call('ROLE')) as unknown[];
    const role = String(answer[0]);
    if (role !== 'master' && role !== 'slave') throw new Error(`redis node ${this.port} answers ROLE ${role}`);
    return role;
  }

  private signal(name: 'SIGSTOP' | 'SIGCONT'): void {
    if (this.child === undefined) throw new Error(`redis node ${this.port} is not running`);
    this.child.kill(name);
    this.paused = name === 'SIGSTOP';
  }
}
