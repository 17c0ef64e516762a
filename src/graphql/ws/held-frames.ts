/**
 * The hub's `next` frames to one WebSocket connection, held for the turn's write and written as one
 * buffer. The subscriptions of a socket (a dashboard's five of one test) each add a frame per
 * record: held as the prefix and payload they are made of, and framed into one buffer at the
 * process's write (the write coalescer's `gather`), they cost one allocation and one stream write
 * a socket and turn instead of one of each a frame. Measured with bench/frame-writers.ts at five
 * frames a socket a turn (bench/README.md, "Frames of a socket written as one buffer").
 *
 * Order: frames another writer puts on the connection (graphql-ws's messages through `ws`, a close
 * frame) must come after the `next` frames held before them, so every such write flushes these
 * first: the WebSocket transport's `send` and `close`, and `closeSocket` (which finds them by the
 * socket: {@link flushHeldFrames}). `ws`'s pings and pongs are control frames, which may come
 * between any two messages. Once the socket is no longer open (a close frame may be on its way) a
 * flush writes nothing: no data may follow a close. So the frames held in the turn a client's own
 * close frame arrives in (`ws` answers it at once) are dropped: that client has left.
 */
import type { Socket } from 'node:net';
import type { WebSocket } from 'ws';
import type { WriteCoalescer } from '../fanout/write-coalescer.js';

/** The frames held for one connection. */
export interface HeldFrames {
  /** Holds an unmasked text frame holding `prefix`, `payload` and a closing brace, for this turn's write. */
  text(prefix: Buffer, payload: Buffer): void;
  /** The TCP connection under the socket, which `ws` writes its own frames to. */
  readonly wire: Socket;
  /** Bytes held and not yet handed to the connection (they count towards the socket's buffer). */
  readonly bytes: number;
  /** Hands what is held to the connection now, as one buffer. */
  flush(): void;
  /** Holds the connection for the turn's write (corked) and hands what is held to it: before another writer's frame. */
  release(): void;
}

/**
 * The held frames of each open socket, for the closes made by code that has only the socket. A
 * WeakMap keyed by the socket object: an entry leaves with its socket.
 */
const bySocket = new WeakMap<WebSocket, HeldFrames>();

/** Creates the held frames of the connection `wire` under `socket`. */
export function createHeldFrames(socket: WebSocket, wire: Socket, coalescer: Pick<WriteCoalescer, 'gather' | 'hold'>): HeldFrames {
  const frames = new ConnectionFrames(socket, wire, coalescer);
  bySocket.set(socket, frames);
  return frames;
}

/** Writes the frames held for `socket`, if any: before anything else is written to it. */
export function flushHeldFrames(socket: WebSocket): void {
  bySocket.get(socket)?.flush();
}

const SUFFIX = 0x7d; // `}`
/** Parts (two a frame) past which a socket's array is dropped after its write rather than kept. */
const MAX_KEPT_PARTS = 64;

/**
 * {@link createHeldFrames}'s frames: one object per socket, its methods shared (bench/README.md,
 * "Idle memory"). The parts are kept flat, prefix and payload in turn, in one array reused from
 * turn to turn (their slots are emptied; an array grown past 32 frames is let go).
 */
class ConnectionFrames implements HeldFrames {
  bytes = 0;
  /** Prefix and payload in turn, `count` of them held; emptied slots are `undefined`. */
  private parts: Array<Buffer | undefined> = [];
  /** Parts held; the first of a turn registers the frames with the coalescer. */
  private count = 0;

  constructor(
    private readonly socket: WebSocket,
    readonly wire: Socket,
    private readonly coalescer: Pick<WriteCoalescer, 'gather' | 'hold'>,
  ) {}

  release(): void {
    this.coalescer.hold(this.wire);
    this.flush();
  }

  text(prefix: Buffer, payload: Buffer): void {
    const length = prefix.length + payload.length + 1;
    this.bytes += headerLength(length) + length;
    const { parts, count } = this;
    parts[count] = prefix;
    parts[count + 1] = payload;
    this.count = count + 2;
    if (count === 0) this.coalescer.gather(this);
  }

  flush(): void {
    const { parts, count, bytes, socket, wire } = this;
    if (count === 0) return;
    this.count = 0;
    this.bytes = 0;
    const open = socket.readyState === socket.OPEN && !wire.destroyed;
    const out = open ? Buffer.allocUnsafe(bytes) : undefined;
    let at = 0;
    // The slots are emptied rather than the array shortened: shortening it gives its storage up,
    // and the next turn's frame would allocate it again.
    for (let i = 0; i < count; i += 2) {
      if (out !== undefined) at = writeTextFrame(out, at, parts[i] as Buffer, parts[i + 1] as Buffer);
      parts[i] = undefined;
      parts[i + 1] = undefined;
    }
    // A turn that brought many frames (a batch of one test's records) leaves no large array behind.
    if (count > MAX_KEPT_PARTS) this.parts = [];
    if (out !== undefined) wire.write(out);
  }
}

/** The length of a server's frame header (RFC 6455 section 5.2) for a payload of `length` bytes. */
export const headerLength = (length: number): number => (length < 126 ? 2 : length < 65_536 ? 4 : 10);

/**
 * Writes one unmasked, unfragmented WebSocket text frame (RFC 6455 section 5.2, as a server sends
 * it) holding `prefix`, `payload` and a closing brace into `out` at `at`; returns where it ends.
 */
export function writeTextFrame(out: Buffer, at: number, prefix: Buffer, payload: Buffer): number {
  const length = prefix.length + payload.length + 1;
  out[at] = 0x81; // FIN, text
  if (length < 126) {
    out[at + 1] = length;
    at += 2;
  } else if (length < 65_536) {
    out[at + 1] = 126;
    out.writeUInt16BE(length, at + 2);
    at += 4;
  } else {
    out[at + 1] = 127;
    out.writeUInt32BE(Math.floor(length / 2 ** 32), at + 2);
    out.writeUInt32BE(length >>> 0, at + 6);
    at += 10;
  }
  // `set`, not `Buffer.copy`: the same copy without `copy`'s argument checks.
  out.set(prefix, at);
  out.set(payload, at + prefix.length);
  at += length;
  out[at - 1] = SUFFIX;
  return at;
}
