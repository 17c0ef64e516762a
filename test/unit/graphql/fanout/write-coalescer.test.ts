/**
 * The write coalescer over a stream that records its writes (a pure seam: a Writable whose
 * `writev` is the system call it stands for): what one turn writes to a connection leaves in one
 * write; when the process is busy it waits up to the bound to leave with what follows; at low load
 * nothing waits past the turn.
 */
import { Writable } from 'node:stream';
import { afterEach, describe, expect, it } from 'vitest';
import { createWriteCoalescer, type WriteCoalescer } from '../../../../src/graphql/fanout/write-coalescer.js';

/** A connection that counts its writes (each `_writev` or `_write` is one) and the chunks in each. */
function recordingConnection() {
  const writes: number[] = [];
  const at: number[] = [];
  const connection = new Writable({
    writev(chunks, done) {
      writes.push(chunks.length);
      at.push(Date.now());
      done();
    },
    write(_chunk, _encoding, done) {
      writes.push(1);
      at.push(Date.now());
      done();
    },
  });
  return { connection, writes, at };
}

const turn = () => new Promise((resolve) => setImmediate(resolve));
let coalescer: WriteCoalescer | undefined;
afterEach(() => coalescer?.dispose());

describe('the write coalescer', () => {
  it('sends what one turn writes to a connection in one write, at the end of the turn', async () => {
    coalescer = createWriteCoalescer({ maxDelayMs: 10 });
    const a = recordingConnection();
    const b = recordingConnection();
    for (let i = 0; i < 100; i++) {
      coalescer.write(a.connection, `frame ${i}`);
      coalescer.write(b.connection, Buffer.from(`frame ${i}`));
    }
    expect(a.writes).toEqual([]);
    await turn();
    expect(a.writes).toEqual([100]);
    expect(b.writes).toEqual([100]);
    coalescer.write(a.connection, 'next turn');
    await turn();
    expect(a.writes).toEqual([100, 1]);
  });

  it('holds the writes another writer makes to a connection (hold) in the same write as its own', async () => {
    coalescer = createWriteCoalescer({ maxDelayMs: 10 });
    const a = recordingConnection();
    coalescer.hold(a.connection);
    a.connection.write('a protocol frame, written by its own library');
    coalescer.write(a.connection, 'a push');
    coalescer.hold(a.connection);
    a.connection.write('another frame');
    expect(a.writes).toEqual([]);
    await turn();
    expect(a.writes).toEqual([3]);
    expect(a.connection.writableCorked).toBe(0);
  });

  it('holds a busy process’s writes up to the bound, so what follows leaves in the same write', async () => {
    // Any utilization counts as busy here.
    coalescer = createWriteCoalescer({ maxDelayMs: 200, busyUtilization: -1, intervalMs: 5 });
    await new Promise((resolve) => setTimeout(resolve, 30));
    expect(coalescer.busy).toBe(true);
    const a = recordingConnection();
    const started = Date.now();
    coalescer.write(a.connection, 'first');
    await turn();
    expect(a.writes).toEqual([]);
    coalescer.write(a.connection, 'second');
    await new Promise((resolve) => setTimeout(resolve, 400));
    expect(a.writes).toEqual([2]);
    expect((a.at[0] as number) - started).toBeGreaterThanOrEqual(190);
  });

  it('flushes a writer that keeps its own writes (gather) at the turn’s write, before the held connections leave, and when disposed', async () => {
    coalescer = createWriteCoalescer({ maxDelayMs: 10 });
    const a = recordingConnection();
    // A writer that hands its kept bytes to the connection when flushed, as the WebSocket's held frames do.
    const kept = { flush: () => a.connection.write('kept frames') };
    coalescer.hold(a.connection);
    a.connection.write('a protocol frame');
    coalescer.gather(kept);
    expect(a.writes).toEqual([]);
    await turn();
    // One write: the kept bytes joined the corked connection before it was uncorked.
    expect(a.writes).toEqual([2]);
    coalescer.gather(kept);
    coalescer.dispose();
    expect(a.writes).toEqual([2, 1]);
  });

  it('holds a gathering writer for a busy process as long as the corked connections', async () => {
    coalescer = createWriteCoalescer({ maxDelayMs: 200, busyUtilization: -1, intervalMs: 5 });
    await new Promise((resolve) => setTimeout(resolve, 30));
    expect(coalescer.busy).toBe(true);
    let flushed = 0;
    coalescer.gather({ flush: () => (flushed += 1) });
    await turn();
    expect(flushed).toBe(0);
    await new Promise((resolve) => setTimeout(resolve, 400));
    expect(flushed).toBe(1);
  });

  it('skips a connection already destroyed, and flushes what it holds when disposed', async () => {
    coalescer = createWriteCoalescer({ maxDelayMs: 10 });
    const gone = recordingConnection();
    gone.connection.destroy();
    coalescer.write(gone.connection, 'lost');
    const a = recordingConnection();
    coalescer.write(a.connection, 'kept');
    coalescer.dispose();
    await turn();
    expect(a.writes).toEqual([1]);
    expect(gone.writes).toEqual([]);
  });
});
