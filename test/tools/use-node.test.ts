/**
 * scripts/use-node.sh as the project's scripts and a developer's shell use it: sourced, it puts the
 * shipped Node.js line on PATH and leaves the caller's shell options (errexit, nounset, pipefail) as
 * they were, strict or not; run as a command, it runs the rest of its line on that line.
 */
import { execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';

const root = join(import.meta.dirname, '..', '..');
const shippedMajor = readFileSync(join(root, '.node-version'), 'utf8').trim().split('.')[0];
const run = promisify(execFile);

/** Runs `script` in a fresh bash in the repo's root and answers its standard output. */
async function bash(script: string): Promise<string> {
  const { stdout } = await run('bash', ['-c', script], { cwd: root });
  return stdout.trim();
}

/**
 * The caller's options: `$-` (errexit, nounset and the rest, read in the shell itself: a command
 * substitution would not see errexit) and pipefail.
 */
const OPTIONS = `"$- $(shopt -o pipefail | tr -s '[:space:]' ' ')"`;

describe('sourcing scripts/use-node.sh', () => {
  it.each([
    ['a lenient shell', 'set +euo pipefail'],
    ['a strict shell', 'set -euo pipefail'],
    ['a shell with errexit alone', 'set +uo pipefail; set -e'],
  ])('leaves the options of %s as they were, and the shipped Node.js line on PATH', async (_name, setup) => {
    const output = await bash(
      `${setup}; before=${OPTIONS}; source scripts/use-node.sh; after=${OPTIONS}; echo "$before"; echo "$after"; node -p 'process.versions.node'`,
    );
    const [before, after, version] = output.split('\n');
    expect(after).toBe(before);
    expect(version?.split('.')[0]).toBe(shippedMajor);
  });

  it('still runs a command on that line when run as one', async () => {
    const { stdout } = await run('bash', ['scripts/use-node.sh', 'node', '-p', 'process.versions.node'], { cwd: root });
    expect(stdout.trim().split('.')[0]).toBe(shippedMajor);
  });
});
