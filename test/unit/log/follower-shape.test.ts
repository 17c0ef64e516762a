/**
 * A follower is made per subscription and per followed test, so what it holds is a per-test cost
 * (bench/README.md, "Idle memory"): built of closures, a pushed idle follower of a test with nothing
 * stored yet held 7.1 KB with its listening (about thirty functions and their contexts beside its
 * fields); as one object, 2.2 KB; without the live channel a pushed follower never uses (made only
 * for a pulled one), 1.4 KB; listening through its log's followed test, with a test's one listener
 * held without a set, 1.34 KB. Measured in a child process, after full collections, over followers of
 * a memory log that each wait for their test's next message.
 */
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { runModuleScript } from '../../support/module-script.js';

const logModule = fileURLToPath(new URL('../../../src/log/memory-result-log.ts', import.meta.url));

describe('an idle pushed follower', () => {
  it('holds under 1.8 KB of heap, its listening in the log included', async () => {
    const script = `
      const { createMemoryResultLog } = await import(${JSON.stringify(logModule)});
      const log = createMemoryResultLog({ ttlSeconds: 3600, maxTests: 100000, maxMessagesPerTest: 10 });
      const count = 5000;
      for (let i = 0; i < count; i++) await log.create({ correlationId: 't' + i, input: null, owner: 'o' });
      const target = { deliver: () => true, end() {}, fail() {} };
      const held = [];
      const follow = async (id) => { const follower = await log.follow(id, { queueLimit: 100 }); follower.push(target); held.push(follower); };
      for (let i = 0; i < 50; i++) await follow('t' + i);
      gc(); gc();
      const before = process.memoryUsage().heapUsed;
      for (let i = 50; i < count; i++) await follow('t' + i);
      gc(); gc();
      console.log(JSON.stringify({ perFollower: (process.memoryUsage().heapUsed - before) / (count - 50), following: log.followers('t7') }));
    `;
    const child = await runModuleScript(script, { flags: ['--expose-gc'] });
    expect(child.stderr).toBe('');
    const { perFollower, following } = JSON.parse(child.stdout) as { perFollower: number; following: number };
    expect(following).toBe(1);
    console.log(`heap per idle pushed follower: ${Math.round(perFollower)} bytes`);
    expect(perFollower).toBeLessThan(1800);
  });
});
