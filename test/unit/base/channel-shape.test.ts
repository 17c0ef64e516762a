/**
 * Two channels are made for every followed test, so their shape is a per-test cost: an object
 * literal with a getter is made by V8 in dictionary mode, with a property table of its own (about
 * 450 bytes each, 0.9 KB a followed test, found in a heap snapshot of 5,000 followed tests). The
 * check runs in a child process, the only place V8's `%HasFastProperties` may be called.
 */
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { runModuleScript } from '../../support/module-script.js';

const channelModule = fileURLToPath(new URL('../../../src/base/channel.ts', import.meta.url));

describe('a channel', () => {
  it('is an object with fast properties, however it is used', async () => {
    const script = `
      const { createChannel } = await import(${JSON.stringify(channelModule)});
      const fresh = createChannel({ limit: 2, overflow: () => new Error('over') });
      const used = createChannel({ limit: 2, overflow: () => new Error('over') });
      used.push(1);
      used.size();
      used.isClosed();
      used.takeAll();
      used.end();
      console.log(JSON.stringify({ fresh: %HasFastProperties(fresh), used: %HasFastProperties(used), iterator: %HasFastProperties(fresh.iterator) }));
    `;
    const child = await runModuleScript(script, { flags: ['--allow-natives-syntax'] });
    expect(child.stderr).toBe('');
    expect(JSON.parse(child.stdout)).toEqual({ fresh: true, used: true, iterator: true });
  });

  it('costs under 500 bytes of heap, waiting on a pull as an idle subscription does', async () => {
    // Made per followed test and per subscription: a channel built of closures held sixteen
    // functions and their context (2.4 KB with its pending pull; 0.4 KB as one object). Measured over 20,000 channels after full
    // collections, each with one pull waiting (its promise included), in a child process.
    const script = `
      const { createChannel } = await import(${JSON.stringify(channelModule)});
      const overflow = () => new Error('over');
      const held = [];
      const make = (n) => { for (let i = 0; i < n; i++) { const c = createChannel({ limit: 2, overflow }); void c.iterator.next(); held.push(c); } };
      make(100);
      gc(); gc();
      const before = process.memoryUsage().heapUsed;
      make(20000);
      gc(); gc();
      console.log(JSON.stringify({ perChannel: (process.memoryUsage().heapUsed - before) / 20000, held: held.length }));
    `;
    const child = await runModuleScript(script, { flags: ['--expose-gc'] });
    expect(child.stderr).toBe('');
    const { perChannel, held } = JSON.parse(child.stdout) as { perChannel: number; held: number };
    expect(held).toBe(20_100);
    expect(perChannel).toBeLessThan(500);
  });
});
