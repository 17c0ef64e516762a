/**
 * The check that every file named in a comment or a document exists (scripts/check-paths.ts, run
 * by scripts/test.sh over the whole repo): what it reports and what it lets pass.
 */
import { describe, expect, it } from 'vitest';
import { staleMentions } from '../../scripts/check-paths.js';

const tracked = new Set(['src/log/redis-tail.ts', 'src/metrics.ts', 'docs/kafka.md', 'docs/operations.md']);
const names = new Set([...tracked].map((f) => f.slice(f.lastIndexOf('/') + 1)));
const check = (file: string, text: string) => staleMentions(file, text, tracked, names);

describe('staleMentions', () => {
  it('reports a path, a link and a bare name that no file of the repo has, with file and line', () => {
    expect(check('src/a.ts', '// ok\n// see src/limits/rate-limits.ts')).toEqual(['src/a.ts:2: src/limits/rate-limits.ts']);
    expect(check('docs/a.md', 'See [the page](missing.md).')).toEqual(['docs/a.md:1: missing.md']);
    expect(check('src/a.ts', '// the tail (redis-tails.ts)')).toEqual(['src/a.ts:1: redis-tails.ts']);
  });

  it('lets pass what names a file that is there, however it is written', () => {
    const text = [
      'src/log/redis-tail.ts and src/log/redis-tail.js (compiled) and src/metrics (a module specifier).',
      'A stem: src/log/redis-* and ^src/log/redis-.',
      '[Kafka](kafka.md), [ops](./operations.md#faults), [a site](https://example.com/x.md).',
      'Outputs of a run: bench/results/profiles/a.cpuprofile.',
      'A bare name: redis-tail.ts; a pattern: *-tail.ts.',
    ].join('\n');
    expect(check('docs/a.md', text)).toEqual([]);
  });
});
