/**
 * Two channels are made for every followed test, so their shape is a per-test cost: an object
 * literal with a getter is made by V8 in dictionary mode, with a property table of its own (about
 * 450 bytes each, 0.9 KB a followed test, found in a heap snapshot of 5,000 followed tests). The
 * check runs in a child process, the only place V8's `%HasFastProperties` may be called.
 */
import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const channelModule = fileURLToPath(new URL('../../../src/base/channel.ts', import.meta.url));

describe('a channel', () => {
  it('is an object with fast properties, however it is used', () => {
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
    const child = spawnSync(process.execPath, ['--allow-natives-syntax', '--import', 'tsx', '--input-type=module', '-e', script], { encoding: 'utf8' });
    expect(child.stderr).toBe('');
    expect(JSON.parse(child.stdout)).toEqual({ fresh: true, used: true, iterator: true });
  });
});
