/**
 * The upgrade run's two-minute smoke (`npm run chaos -- --upgrade-from=REF`, chaos/upgrade.ts): the
 * three replicas start on the release `chaos/upgrade-from` names, on the chaos run's Redis Cluster
 * and Kafka nodes, under its workload; halfway through they are upgraded to this checkout one at a
 * time. It passes when every check of the chaos run does: nothing acknowledged lost or stored twice
 * across the roll, every follower handed each message once, no failed read outside the roll's window.
 */
import { execFile } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';

const from = readFileSync('chaos/upgrade-from', 'utf8').trim();

describe('npm run chaos -- --upgrade-from, two minutes', () => {
  it(
    `upgrades every replica from ${from.slice(0, 12)} under load and finds nothing lost, nothing twice, every follower exact`,
    async () => {
      const out = mkdtempSync(join(tmpdir(), 'rcs-upgrade-'));
      const run = await new Promise<{ code: number; stderr: string }>((resolve) => {
        execFile(
          process.execPath,
          ['--import', 'tsx', 'chaos/run.ts', '--minutes=2', '--seed=7', '--settle=2', `--upgrade-from=${from}`, `--out=${out}`],
          { timeout: 12 * 60_000, maxBuffer: 64 * 1024 * 1024 },
          (error, _stdout, stderr) => resolve({ code: error === null ? 0 : typeof error.code === 'number' ? error.code : -1, stderr }),
        );
      });
      const tail = run.stderr.split('\n').slice(-20).join('\n');
      // One at a time, the API replicas first, as the run's log says.
      const order = ['api-1', 'api-2', 'consumer-1'].map((name) => run.stderr.indexOf(`upgraded: ${name}`));
      expect(order.every((at) => at >= 0) && order.toString() === [...order].sort((a, b) => a - b).toString(), tail).toBe(true);
      expect(run.stderr).not.toMatch(/fault: /);
      expect(run.stderr, tail).toMatch(/ok {5}every acknowledged result stored/);
      expect(run.code, tail).toBe(0);
      const report = readdirSync(out).find((name) => name.endsWith('.md')) as string;
      const text = readFileSync(join(out, report), 'utf8');
      expect(text).toMatch(/\| every follower got every message once and the final one \| ok \|/);
      expect(text).toMatch(/rolling upgrade/);
    },
    13 * 60_000,
  );
});
